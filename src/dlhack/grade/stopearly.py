"""When grading stops early: the one rule, and the adapter's two messages that trigger it.

    stop = stops_after(run, ranks)    # None, or Stop(whole, message)

Some runs tell how the runs not yet started would end, so waiting for them only costs time:

- answer cells that cannot be imported (the adapter's IMPORT_FAILURE), or tampering: nothing
  more of the submission is run;
- a stub (NotImplementedError) or a missing answer function (MISSING_ANSWER): nothing more of
  that exercise;
- a run that timed out, or left ranks waiting inside the learner's code: nothing more of that
  exercise (each would hang too, and cost a timeout or a grace period).

The schedule (schedule.py) applies it across batches, a batch (batch.py) to the tests behind
one that ended its launch early. The graded tests' adapter (``graded/conftest.py``) runs
inside each graded rank and starts its messages with IMPORT_FAILURE and MISSING_ANSWER, which
the verdict recognises. The adapter loads this file by its path, since importing the dlhack
package would import Chainer in every rank (about 0.4 s each): so it imports nothing of dlhack.
"""
from collections import namedtuple

IMPORT_FAILURE = "Your answer cells could not run"  # nothing else can pass
MISSING_ANSWER = "Your notebook defines no"  # nothing else of its exercise can pass
TAMPERED = "not run: the submission tampered with the grader's files"

# ``whole``: the whole submission stops, else only the run's exercise; ``message``: what each
# run that is not started says instead.
Stop = namedtuple("Stop", "whole message")


def stops_after(run, ranks):
    """What ``run`` (a verdict at ``ranks`` ranks) stops from running, or None."""
    if run["outcome"] == "tampered":
        return Stop(True, TAMPERED)
    if run.get("import_failed"):
        return Stop(True, "not run: " + run["message"])
    if run["outcome"] == "not_done" or run.get("missing_answer"):
        return Stop(False, "not run: " + run["message"])
    if run.get("timed_out") or run.get("stuck"):
        return Stop(False, f"not run: this exercise already hung at {ranks} "
                           f"rank{'s' if ranks > 1 else ''}")
    return None
