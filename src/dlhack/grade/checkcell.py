"""What a lab notebook calls: ``check`` in each check cell, ``export`` to try answers under mpiexec.

    dlhack.grade.check("02_collectives", "allreduce_ring")   # prints feedback, returns the points
    dlhack.grade.export("02_collectives", "answers_02.py")   # the answers run so far, as a module

Both take the answers from the notebook's live namespace (see ``notebook.py`` for why not the file
on disk): the cells that defined the lab's answer functions, which are the exercise names. ``check``
then runs the same harness as ``dlhack grade``. It prints to stdout only and never raises, since
nbgrader scores a check cell 0 when it errs or writes to stderr; it returns the points, which a
check cell leaves as its value so that nbgrader gives partial credit.
"""
import os
import sys
import traceback
import warnings
from pathlib import Path

from dlhack.grade import notebook, report
from dlhack.grade.harness import grade
from dlhack.grade.plan import LabError, load_plan


def check(lab, exercise=None, namespace=None, *, timeout=None):
    """Grade one exercise (or the whole lab) on the answer cells run in this notebook.

    Args:
        lab: the lab's name, e.g. ``"02_collectives"``.
        exercise: the answer function to grade, e.g. ``"allreduce_ring"``; None grades them all.
        namespace: where the answers are defined; by default the caller's globals (in a
            notebook: the kernel's namespace).
        timeout: seconds per test run, replacing each test's own timeout.

    Returns:
        The points earned, a float (0.0 when not done yet, or when the check itself failed).
    """
    if os.environ.get("DLHACK_GRADING"):
        return 0.0  # learner code that calls check() is being graded right now: never recurse
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
                return 0.0
            submission, missing = notebook.from_namespace(plan.exercises, namespace)
            if all(name in missing for name in wanted):
                print(f"{', '.join(wanted)}: not defined yet: run the cell that defines "
                      f"{'it' if len(wanted) == 1 else 'them'}, then this one.")
                return 0.0
            result = grade(plan, submission, exercises=wanted, timeout=timeout)
        except LabError as err:
            print(f"dlhack.grade.check cannot check {lab}: {err}")
            return 0.0
        except Exception as err:  # noqa: BLE001 - a grader bug must not break the learner's notebook
            print(f"dlhack.grade.check failed ({type(err).__name__}: {err}); please tell your "
                  f"instructor.\n{traceback.format_exc(limit=5)}")
            return 0.0
    print(report.feedback(result))
    return float(result["score"])


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
