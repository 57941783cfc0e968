"""The autograder for the labs: graded tests under mpiexec, one launch per exercise and rank count.

    dlhack grade SUBMISSION.ipynb [--json FILE] [--junit-xml FILE]   # cli.py
    dlhack grade COURSE/submitted/ --csv grades.csv --feedback COURSE/feedback   # a class
    dlhack labs generate | check                                 # labs.py
    dlhack.grade.check("02_collectives", "allreduce_ring")       # in a lab's check cell

Modules, in the order a grading goes through them:

- ``plan``      where graded/ lives; each test's rank counts, points and timeout
- ``layout``    who handed a notebook in, for which lab, when: nbgrader's submitted/ tree
- ``intake``    can the notebook be graded (format 4, a Python kernel), and for which lab
- ``notebook``  the learner's answer cells (from a file or a live kernel) as one module
- ``schedule``  grade one submission: a batch per exercise and rank count, side by side on
                shared rank slots
- ``stopearly`` the one rule for which runs are not started (a stub, a hang, tampering), and
                the graded tests' messages that trigger it
- ``batch``     one batch: an exercise's tests at one rank count, in one launch under mpiexec
                with limits and a timeout per test
- ``watch``     the ranks' result records as they come, and when to stop waiting
- ``sandbox``   the bubblewrap sandbox each launch is sealed in
- ``pytest_in_rank.py``  the grader's part of each rank (shim, barrier, pytest, observations,
                records); a script run by its path inside ``dlhack/jobs/rankwrap.py``
- ``recorder``  its pytest plugin: what each test observed, how it ended, simulated hosts
- ``obsformat`` observations in a closed format (no pickle), written in the rank, read outside
- ``pmpi``      builds the MPI profiling shim (``pmpi_shim.c``) that logs each rank's messages
- ``traffic``   reads one test's part of that log
- ``checker``   where each test's outcome is decided: the check halves, run in
                ``check_outside.py``, a process that never imports learner code
- ``guard``     what pytest_in_rank.py snapshots before learner code runs and checks after
                (names tampering; no longer what stops a forged pass)
- ``verdict``   one test's run worded for the learner: an outcome and a message
- ``score``     the points: a test passes only at every rank count; each exercise's status
- ``tampering`` the lab's nbgrader cells that a submission changed, deleted or duplicated
- ``report``    feedback text, JSON and JUnit XML
- ``classreport`` a class at a glance for mentors: CSV (also nbgrader's) and a small HTML page
- ``feedback``  a page per learner, where ``nbgrader release_feedback`` looks for it
- ``checkcell`` ``check`` and ``export``, for lab notebooks

Starting the ranks, their stack dumps, the kill sweep and how each rank ended are the jobs
room's (``dlhack.jobs``: ``supervise``, ``stacks``, ``endings``), shared with ``dlhack run``.

How to add a lab: graded/README.md. What the grader trusts: the README's grader section.
"""
from dlhack.grade.checkcell import check, export
from dlhack.grade.schedule import grade, grade_notebook

__all__ = ["check", "export", "grade", "grade_notebook"]
