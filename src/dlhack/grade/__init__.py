"""The autograder for the labs: graded tests under mpiexec, one launch per exercise and rank count.

    dlhack grade SUBMISSION.ipynb [--json FILE] [--junit FILE]   # cli.py
    dlhack grade FOLDER/ --csv class.csv --html class.html     # the class report
    dlhack labs generate | check                                 # labs.py
    dlhack.grade.check("02_collectives", "allreduce_ring")       # in a lab's check cell

Modules, in the order a grading goes through them:

- ``plan``      where tests/labs lives; each test's rank counts, points and timeout
- ``intake``    can the notebook be graded (format 4, a Python kernel), and for which lab
- ``notebook``  the learner's answer cells (from a file or a live kernel) as one module
- ``harness``   a launch per exercise and rank count, in parallel; points added up
- ``runner``    one launch under mpiexec with limits, a timeout per test; the threat model
- ``watch``     the ranks' result records as they come, and when to stop waiting
- ``sandbox``   the bubblewrap sandbox each run is sealed in
- ``rank.py``   the grader's part of each rank (snapshot, barrier, pytest, records); it runs
                inside ``dlhack.tools.rankwrap``, and never imports dlhack
- ``guard``     what rank.py snapshots before learner code runs and checks after
- ``verdict``   what the ranks left behind, as an outcome and a message
- ``report``    feedback text, JSON and JUnit XML
- ``classreport`` a class at a glance for mentors: CSV and a small HTML page
- ``checkcell`` ``check`` and ``export``, for lab notebooks

Starting the ranks, their stack dumps and the kill sweep are ``dlhack.tools.supervise``'s, the
supervisor ``dlhack run`` uses too; stack dumps are read by ``dlhack.tools.stacks``.

How to add a lab: tests/labs/README.md.
"""
from dlhack.grade.checkcell import check, export
from dlhack.grade.harness import grade, grade_notebook

__all__ = ["check", "export", "grade", "grade_notebook"]
