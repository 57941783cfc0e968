"""One launch per exercise and rank count (``batch.run_batch``), and what it must keep from one
launch per test: a test that ends its launch early costs only that test, a hang stops only what
is behind it at that rank count, and every test has its own timeout.

The plants wrap the solution's ``allreduce_ring`` of lab 02 and misbehave only in the first test
at 3 ranks (``test_sum_matches_serial``, a 12-element array), so the two tests behind it in the
same launch show what happens to them.
"""


from dlhack.grade import batch
from dlhack.grade.plan import load_plan
from dlhack.grade.report import feedback
from dlhack.grade.schedule import grade
from tests.grade.gradetools import solution_cell, solution_notebook, with_cell

LAB, RING = "02_collectives", "allreduce_ring"
FIRST, SECOND, THIRD = "test_sum_matches_serial", "test_length_not_divisible", \
    "test_smaller_than_rank_count"


def wrapped(body):
    """The solution's ring, renamed, and a new ``allreduce_ring`` that runs ``body`` first."""
    return solution_cell(LAB, RING) + f'''

import os
import time

_solution_ring = allreduce_ring


def allreduce_ring(comm, x):
    """The solution, after a planted misdeed."""
{body}
    return _solution_ring(comm, x)
'''


EXIT_IN_FIRST = "    if np.size(x) == 12 and comm.size == 3:\n        os._exit(3)"
HANG_IN_FIRST = "    while np.size(x) == 12 and comm.size == 3:\n        pass"
SLOW_AFTER_FIRST = "    if np.size(x) != 12 and comm.size == 3:\n        time.sleep(3.5)"


def graded(body, monkeypatch, workdir, timeout=None):
    """Grade the ring exercise of the plant; returns (result, rank count of every launch)."""
    launches = []
    start = batch.supervise.start

    def counting(cmd, run_dir, n=None, **kw):
        launches.append(n)
        return start(cmd, run_dir, n, **kw)

    monkeypatch.setattr(batch.supervise, "start", counting)
    submission = with_cell(solution_notebook(LAB), RING, body and wrapped(body))
    result = grade(load_plan(LAB), submission, exercises=[RING], timeout=timeout,
                   workdir=workdir)
    return result, sorted(launches)


def runs_at(result, test_name, ranks):
    for test in result["exercises"][0]["tests"]:
        if test["name"] == test_name:
            return next(run for run in test["runs"] if run["ranks"] == ranks)
    raise KeyError(test_name)


def test_one_launch_per_rank_count(monkeypatch, workdir):
    result, launches = graded(None, monkeypatch, workdir)
    assert result["score"] == result["max_score"] == 4, feedback(result)
    # 8 runs (3 tests, 1-4 ranks): a launch per test would make 8
    assert launches == [1, 2, 3, 4]


def test_a_rank_that_exits_costs_only_its_own_test(monkeypatch, workdir):
    result, launches = graded(EXIT_IN_FIRST, monkeypatch, workdir)
    first = runs_at(result, FIRST, 3)
    assert first["outcome"] == "crashed" and "exited without finishing" in first["message"]
    assert runs_at(result, SECOND, 3)["outcome"] == "passed", feedback(result)
    assert runs_at(result, THIRD, 3)["outcome"] == "passed"
    assert result["score"] == 2  # the first test's 2 points lost, the other two earned
    assert launches == [1, 2, 3, 3, 4]  # the two tests behind it: a second launch at 3


def test_a_hang_stops_what_is_behind_it_at_that_rank_count(monkeypatch, workdir):
    result, _ = graded(HANG_IN_FIRST, monkeypatch, workdir, timeout=4)
    assert runs_at(result, FIRST, 3)["outcome"] == "hung"
    for name in (SECOND, THIRD):
        run = runs_at(result, name, 3)
        assert run["outcome"] == "not_run", feedback(result)
        assert "already hung at 3 ranks" in run["message"]
    assert runs_at(result, FIRST, 2)["outcome"] == "passed"
    assert result["score"] == 0


def test_every_test_has_its_own_timeout(monkeypatch, workdir):
    # 3.5 s in each of the two tests behind the first, 5 s allowed per test: 7 s for the launch
    # after the first test, which one clock for the whole launch would not allow.
    result, _ = graded(SLOW_AFTER_FIRST, monkeypatch, workdir, timeout=5)
    assert result["score"] == 4, feedback(result)
    assert runs_at(result, THIRD, 3)["duration_s"] > 3
