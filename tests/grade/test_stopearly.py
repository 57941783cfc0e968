"""The one rule for which runs are not started (dlhack.grade.stopearly), and the graded tests'
adapter speaking its messages."""
import importlib.util

import pytest

from dlhack.grade.stopearly import IMPORT_FAILURE, MISSING_ANSWER, Stop, stops_after
from tests.support import ROOT


@pytest.mark.parametrize(("run", "stop"), [
    ({"outcome": "passed"}, None),
    ({"outcome": "failed", "message": "wrong sum"}, None),
    ({"outcome": "crashed", "message": "rank 1 crashed"}, None),
    ({"outcome": "tampered"}, Stop(True, "not run: the submission tampered with the grader's files")),
    ({"outcome": "failed", "import_failed": True, "message": f"{IMPORT_FAILURE}: no numpy"},
     Stop(True, f"not run: {IMPORT_FAILURE}: no numpy")),
    ({"outcome": "not_done", "message": "not yet done: f still raises NotImplementedError"},
     Stop(False, "not run: not yet done: f still raises NotImplementedError")),
    ({"outcome": "failed", "missing_answer": True, "message": f"{MISSING_ANSWER} `f`"},
     Stop(False, f"not run: {MISSING_ANSWER} `f`")),
    ({"outcome": "hung", "timed_out": True, "message": ""},
     Stop(False, "not run: this exercise already hung at 3 ranks")),
    ({"outcome": "failed", "stuck": True, "message": ""},
     Stop(False, "not run: this exercise already hung at 3 ranks")),
])
def test_what_each_run_stops(run, stop):
    assert stops_after(run, 3) == stop


def test_one_rank_is_said_in_the_singular():
    assert stops_after({"outcome": "hung", "timed_out": True}, 1).message.endswith("at 1 rank")


def test_the_adapter_starts_its_messages_with_the_rules_words():
    """graded/conftest.py loads them from stopearly.py by its path: the very same strings."""
    spec = importlib.util.spec_from_file_location("labs_conftest",
                                                  ROOT / "graded" / "conftest.py")
    adapter = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(adapter)
    assert (adapter.IMPORT_FAILURE, adapter.MISSING_ANSWER) == (IMPORT_FAILURE, MISSING_ANSWER)
