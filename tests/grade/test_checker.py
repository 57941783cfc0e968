"""grade/checker.py and check_outside.py: a test's outcome decided in the grader's checking
process from what the ranks observed; a rank's own "passed" only ever loses points.

Lab 02's first naive test at one rank is the case: its check needs the rank's observation and
a shim log (written here by hand: one rank sends nothing)."""
import numpy as np
import pytest

from dlhack.grade import obsformat
from dlhack.grade.checker import FORGED, Checker, CheckRequest, decide
from dlhack.grade.plan import load_plan

PASSED = {"outcome": "passed", "message": ""}


@pytest.fixture(scope="module")
def lab(tmp_path_factory):
    plan = load_plan("02_collectives")
    checker = Checker(plan, tmp_path_factory.mktemp("grading"))
    yield plan, checker
    checker.close()


def right_sum():
    return np.random.default_rng([2, 0]).standard_normal((7,))  # collectives.rank_data(0, (7,))


def case(lab, tmp_path, obs=None, shim=None, traffic="P 1001\nP 1002\n"):
    plan, _ = lab
    test = next(t for t in plan.tests if t.exercise == "allreduce_naive")
    if obs is not None:
        obsformat.write(tmp_path / "obs.0.0", obs)
    (tmp_path / "traffic.0").write_text("H 1 0 1 4096\n" + traffic)
    return CheckRequest(test, tmp_path, 0, 1, 5, shim)


def test_the_check_passes_a_right_observation(lab, tmp_path):
    x = right_sum()
    decided = decide(lab[1], case(lab, tmp_path, {"got": x, "x": x}), {0: PASSED})
    assert decided[0]["outcome"] == "passed", decided


def test_the_check_fails_a_wrong_one_in_its_own_words(lab, tmp_path):
    x = right_sum()
    decided = decide(lab[1], case(lab, tmp_path, {"got": x * 2, "x": x}), {0: PASSED})
    assert decided[0]["outcome"] == "failed"
    assert "differs from the serial reference" in decided[0]["message"]


def test_a_value_never_observed_fails(lab, tmp_path):
    decided = decide(lab[1], case(lab, tmp_path, {"x": right_sum()}), {0: PASSED})
    assert decided[0] == {**PASSED, "outcome": "failed", "message": "rank 0 reported no got",
                          "exc_type": "", "frames": []}


def test_passed_without_an_observation_was_written_by_learner_code(lab, tmp_path):
    decided = decide(lab[1], case(lab, tmp_path), {0: PASSED})
    assert decided[0]["outcome"] == "tampered" and decided[0]["message"] == FORGED


def test_a_ranks_own_failure_stands_and_is_not_checked(lab, tmp_path):
    failed = {"outcome": "failed", "message": "raised ValueError"}
    x = right_sum()
    assert decide(lab[1], case(lab, tmp_path, {"got": x, "x": x}), {0: failed}) == {0: failed}


def test_without_the_shim_a_check_of_messages_is_the_graders_error(lab, tmp_path):
    x = right_sum()
    decided = decide(lab[1], case(lab, tmp_path, {"got": x, "x": x}, shim="no mpicc"),
                     {0: PASSED})
    assert decided[0]["outcome"] == "error" and "no mpicc" in decided[0]["message"]


def test_a_forged_traffic_line_or_observation_is_tampering(lab, tmp_path):
    x = right_sum()
    decided = decide(lab[1], case(lab, tmp_path, {"got": x, "x": x}, traffic="P 1001\nZ\nP 1002\n"),
                     {0: PASSED})
    assert decided[0]["outcome"] == "tampered" and "messages" in decided[0]["message"]
    (tmp_path / "obs.0.0").write_bytes(b"DLOBS1\n")
    decided = decide(lab[1], case(lab, tmp_path), {0: PASSED})
    assert decided[0]["outcome"] == "tampered" and "observed" in decided[0]["message"]


def test_the_checking_process_holds_the_lab_and_no_answers(lab):
    plan, checker = lab
    held = {p.relative_to(checker.root).as_posix() for p in checker.root.rglob("*.py")
            if "__pycache__" not in p.parts}
    assert held == {rel for rel, _ in plan.files if rel.endswith(".py")}
    assert not any("submission" in name for name in held)
