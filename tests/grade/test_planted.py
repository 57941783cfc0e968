"""Planted wrong submissions (tests/grade/submissions/02_collectives/, made by make_submissions.py):
each gets the verdict it deserves, with a message that says what to look at, without changing the
notebook and without leaving a process behind. A hang costs its exercise one timeout: the run that
hung is stopped on the job's clock and the exercise's later runs are not started
(``hang_stops_its_exercise_only``). How long grading takes is measured by ``dlhack bench grade``,
not asserted here: a wall-clock bound fails on a loaded machine, whatever its margin.

Each is graded on the exercise its plant is in (the solution and the lab are graded in full in
test_schedule.py), which keeps the set to about a minute on two cores.
"""
import pytest

from dlhack.grade import grade_notebook
from dlhack.grade.report import feedback
from tests.grade.gradetools import PLANTED, flat, sha256, tree_hashes
from tests.support import ROOT

TIMEOUT = 8  # s per test run; the planted hangs cost one timeout each
NAIVE, RING, AVERAGE = ["allreduce_naive"], ["allreduce_ring"], ["average_gradients"]


def lab_tests():
    """Hashes of what grading lab 02 reads from graded/ (other labs change as people work)."""
    graded = ROOT / "graded"
    return {**tree_hashes(graded / "02_collectives"), "conftest.py": sha256(graded / "conftest.py"),
            "labtools.py": sha256(graded / "labtools.py")}


def runs_of(result, test_name):
    """``{rank count: outcome}`` of one test in a result."""
    for ex in result["exercises"]:
        for test in ex["tests"]:
            if test["name"] == test_name:
                return {run["ranks"]: run["outcome"] for run in test["runs"]}
    raise KeyError(test_name)


def odd_counts_fail_alone(result):
    assert runs_of(result, "test_sum_matches_serial") == {1: "passed", 2: "passed", 3: "failed",
                                                          4: "passed"}


def hang_stops_its_exercise_only(result):
    """The hang is caught (on the job's clock: jobs/clock.py), and the exercise's runs after it
    are not started: it costs one timeout, not one per run."""
    mean, flat_buffer = (runs_of(result, "test_mean_matches_serial"),
                         runs_of(result, "test_one_flat_buffer"))
    assert "hung" in mean.values() and "not_run" in mean.values(), mean
    assert set(flat_buffer.values()) <= {"hung", "not_run"}, flat_buffer
    assert result["exercises"][0]["score"] == 3  # allreduce_naive, untouched by the plant


# name: (exercises graded, status, score, max score, what the feedback says, more checks)
CASES = {
    "wrong_mean": (AVERAGE, "graded", 1, 3, ["equals the sum over the ranks",
                                             "the mean is the sum divided by comm.size"]),
    "odd_ranks": (RING, "graded", 0, 4, ["passes at 1, 2, 4 ranks, fails at 3 ranks",
                                         "fails only at odd rank counts"], odd_counts_fail_alone),
    "deadlock": (NAIVE, "graded", 0, 3, ["rank 1: the result differs", "own input",
                                         "rank 0 was still waiting in allreduce_naive",
                                         "comm.Recv(buf, source=src)"]),
    "one_rank_raises": (RING, "graded", 0, 4, ["rank 1: raised an MPI error: Invalid rank",
                                               "in allreduce_ring (line",
                                               "rank 0 was still waiting in allreduce_ring"]),
    "infinite_loop": (NAIVE + AVERAGE, "graded", 3, 6, [
        f"no rank finished within {TIMEOUT} s", "rank 0 was still waiting in average_gradients"],
        hang_stops_its_exercise_only),
    "abort": (RING, "graded", 0, 4, ["crashed (Fatal Python error: Aborted) in allreduce_ring",
                                     "os.abort()"]),
    "memory_hog": (NAIVE, "graded", 0, 3, ["raised MemoryError", "at most 512 MiB",
                                           "hoard.append(np.ones(10**7))"]),
    # The sandbox shows the tests read-only: the rewrite fails, and so the answers do not import.
    "overwrite_tests": (None, "error", 0, 10, ["raised OSError: [Errno 30] Read-only file system"]),
    "forge_result": (None, "tampered", 0, 10, [
        "wrote a result file the grader could not verify"]),
    "renamed": (RING, "graded", 0, 4, ["Your notebook defines no `allreduce_ring`"]),
    "syntax_error": (RING, "graded", 0, 4, [
        "answer cell 'allreduce_ring' was left out: syntax error at line 25",
        "defines no `allreduce_ring`"]),
    "missing_import": (None, "error", 0, 10, ["they import `torch`, which is not installed",
                                              "line 1 of answer cell 'allreduce_naive'"]),
    "not_json": (None, "invalid", 0, None, ["is not a notebook: invalid JSON at line"]),
}


@pytest.mark.parametrize("name", list(CASES))
def test_planted_submission_gets_its_verdict(name, workdir):
    exercises, status, score, top, says, *more = CASES[name]
    path = PLANTED / f"{name}.ipynb"
    before, tests_before = sha256(path), lab_tests()
    result = grade_notebook(path, lab="02_collectives", exercises=exercises, timeout=TIMEOUT,
                            memory_mb=512, workdir=workdir)
    text = feedback(result)
    flat = " ".join(text.split())  # phrases may be wrapped across lines
    assert (result["status"], result["score"], result["max_score"]) == (status, score, top), text
    for phrase in says:
        assert phrase in flat, f"{phrase!r} not in:\n{text}"
    for check in more:
        check(result)
    assert sha256(path) == before, "the grader changed the submission"
    assert lab_tests() == tests_before, "the repository's tests changed"


def test_an_output_flood_fails_only_the_flooding_submission_and_says_so(workdir):
    result = grade_notebook(PLANTED / "flood.ipynb", exercises=NAIVE, timeout=8, workdir=workdir)
    assert result["score"] == 0 and result["status"] != "incomplete", feedback(result)
    assert "wrote more than 64 MB of output (it was cut there)" in flat(result)
