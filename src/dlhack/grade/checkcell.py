"""What a lab notebook calls: ``check`` in each check cell, ``export`` to try answers under mpiexec.

    dlhack.grade.check("02_collectives", "allreduce_ring")   # prints feedback as it goes
    dlhack.grade.export("02_collectives", "answers_02.py")   # the answers run so far, as a module

Both take the answers from the notebook's live namespace (see ``notebook.py`` for why not the file
on disk): the cells that defined the lab's answer functions, which are the exercise names. ``check``
then runs the same schedule as ``dlhack grade``, printing a line as each test ends at each rank
count, then the feedback. It prints to stdout only and never raises, since nbgrader scores a
check cell 0 when it errs or writes to stderr.

What the cell's value is, and why. ``check`` returns the points earned. nbgrader
(``nbgrader.utils.determine_grade``) reads a graded code cell so: an error or stderr output
scores 0; an ``execute_result`` whose text is a number scores that number (partial credit);
*no* value at all scores full marks. So a check cell must keep a numeric value under nbgrader
(``nbgrader autograde`` and ``validate`` set ``NBGRADER_EXECUTION``), or every exercise, even one
never started, would get full marks. In the learner's JupyterLab the same value would only show
as a stray ``Out[..]: 3.0`` under the feedback, which already says the score; there ``check``
returns a :class:`Points`, a float that displays nothing.
"""
import os
import sys
import threading
import traceback
import warnings
from pathlib import Path

from dlhack.grade import notebook, report, sandbox
from dlhack.grade.plan import LabError, load_plan
from dlhack.grade.schedule import grade


class Points(float):
    """The points a check earned: a float that IPython does not display (see the module doc)."""

    def _ipython_display_(self):
        pass  # the feedback printed above already gives the score


def _value(points):
    """The check cell's value: a plain float under nbgrader, which reads it as partial credit."""
    return float(points) if os.environ.get("NBGRADER_EXECUTION") else Points(points)


def _trusted():
    """Run without the sandbox only where there is none, and never under nbgrader.

    A check cell runs the learner's own answers, which already run in the learner's own kernel:
    on a laptop without bubblewrap the check still works. Under nbgrader the check cell decides
    a grade, so there the sandbox is required (``grade`` raises, and the check refuses loudly:
    ``_refuse_under_nbgrader``).
    """
    return not os.environ.get("NBGRADER_EXECUTION") and sandbox.unavailable() is not None


REFUSED = 75  # the kernel's exit status when a check refuses to score under nbgrader


def _refuse_under_nbgrader(why):
    """Under nbgrader, a check that could not grade must not score at all: stop the kernel.

    Any value, or an error in the cell, would become a mark (0, quietly, in the gradebook). A
    kernel that dies fails ``nbgrader autograde`` for this submission, loudly: nbgrader logs it,
    records no automatic score (its formgrader flags the submission for a person), and exits
    non-zero. Outside nbgrader the learner reads ``why``.
    """
    if not os.environ.get("NBGRADER_EXECUTION"):
        return
    sys.__stderr__.write(f"dlhack.grade.check refuses to score under nbgrader: {why}. Grade "
                         f"with `dlhack grade COURSE/submitted/` (nbgrader's layout), or fix this "
                         f"and autograde again.\n")
    sys.__stderr__.flush()
    os._exit(REFUSED)


def _progress_printer(out):
    """A schedule progress callback: one line per finished run, as ``[pass] name at 3 ranks``."""
    lock = threading.Lock()

    def progress(test, ranks, run):
        if run["outcome"] == "not_run":
            return  # the feedback at the end says what was not run and why
        mark = report.MARKS.get(run["outcome"], "FAIL")
        took = f" ({run['duration_s']:g} s)" if "duration_s" in run else ""
        with lock:
            out.write(f"  [{mark}] {test.name} at {ranks} rank{'s' if ranks > 1 else ''}{took}\n")
            out.flush()

    return progress


def check(lab, exercise=None, namespace=None, *, timeout=None):
    """Grade one exercise (or the whole lab) on the answer cells run in this notebook.

    Args:
        lab: the lab's name, e.g. ``"02_collectives"``.
        exercise: the answer function to grade, e.g. ``"allreduce_ring"``; None grades them all.
        namespace: where the answers are defined; by default the caller's globals (in a
            notebook: the kernel's namespace).
        timeout: seconds per test run, replacing each test's own timeout.

    Returns:
        The points earned (0.0 when not done yet, or when the check itself failed): a plain
        float under nbgrader, else a :class:`Points` that the notebook does not display.
    """
    if os.environ.get("DLHACK_GRADING"):
        return _value(0.0)  # learner code that calls check() is being graded right now
    namespace = sys._getframe(1).f_globals if namespace is None else namespace
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # a warning would go to stderr, which zeroes the cell
        try:
            plan = load_plan(lab)
            wanted = [exercise] if exercise else plan.exercises
            unknown = [name for name in wanted if name not in plan.exercises]
            if unknown:
                print(f"{lab} has no exercise {unknown[0]!r}; "
                      f"its exercises: {', '.join(plan.exercises)}")
                return _value(0.0)
            submission, missing = notebook.from_namespace(plan.exercises, namespace)
            if all(name in missing for name in wanted):
                print(f"{', '.join(wanted)}: not defined yet: run the cell that defines "
                      f"{'it' if len(wanted) == 1 else 'them'}, then this one.")
                return _value(0.0)
            tests = [t for t in plan.tests if t.exercise in wanted]
            counts = sorted({n for t in tests for n in t.ranks})
            print(f"Checking {', '.join(wanted)}: {len(tests)} test(s) at "
                  f"{', '.join(map(str, counts))} ranks; a line as each run ends.", flush=True)
            result = grade(plan, submission, exercises=wanted, timeout=timeout,
                           trusted=_trusted(), progress=_progress_printer(sys.stdout))
        except LabError as err:
            _refuse_under_nbgrader(err)
            print(f"dlhack.grade.check cannot check {lab}: {err}")
            return _value(0.0)
        except Exception as err:  # noqa: BLE001 - a grader bug must not break the learner's notebook
            _refuse_under_nbgrader(f"the grader failed ({type(err).__name__}: {err})")
            print(f"dlhack.grade.check failed ({type(err).__name__}: {err}); please tell your "
                  f"instructor.\n{traceback.format_exc(limit=5)}")
            return _value(0.0)
    if result["status"] == "incomplete":
        _refuse_under_nbgrader(f"some tests could not run: {result['message']}")
    print(report.feedback(result))
    return _value(result["score"])


def export(lab, path, namespace=None):
    """Write the answer cells run in this notebook to ``path``, to import in an mpiexec script.

    Args:
        lab: the lab's name.
        path: the module to write, e.g. ``"answers_02.py"``.
        namespace: where the answers are defined; by default the caller's globals.

    Returns:
        The names of the answer functions that were not defined (so not written).
    """
    namespace = sys._getframe(1).f_globals if namespace is None else namespace
    plan = load_plan(lab)
    submission, missing = notebook.from_namespace(plan.exercises, namespace)
    Path(path).write_text(submission.text)
    written = [name for name in plan.exercises if name not in missing]
    print(f"wrote {path}: {', '.join(written) or 'no answers yet'}")
    return missing
