"""The points of one submission (dlhack.grade.score), from runs made by hand: a test earns its
points only at every rank count it declares, says where it passes and fails (with a hint when
only odd counts fail), and a tampered run costs the whole submission."""
from dlhack.grade.plan import GradedTest, Plan
from dlhack.grade.score import ODD_HINT, score

RING = GradedTest(nodeid="02/test_allreduce_ring.py::test_sum", exercise="allreduce_ring",
                  name="test_sum", ranks=(1, 2, 3, 4), timeout=10, points=2)
TRAFFIC = GradedTest(nodeid="02/test_allreduce_ring.py::test_traffic", exercise="allreduce_ring",
                     name="test_traffic", ranks=(2,), timeout=10, points=1)
NAIVE = GradedTest(nodeid="02/test_allreduce_naive.py::test_sum", exercise="allreduce_naive",
                   name="test_sum", ranks=(1, 3), timeout=10, points=3)
PLAN = Plan(lab="02_collectives", tests=(RING, TRAFFIC, NAIVE), files=())


def run(ranks, outcome="passed", message="", **flags):
    return {"ranks": ranks, "outcome": outcome, "message": message, **flags}


def runs(**outcomes):
    """Every run passed, but those named ``"<test var>_<ranks>"`` (``ring_3``)."""
    found = {}
    for var, test in (("ring", RING), ("traffic", TRAFFIC), ("naive", NAIVE)):
        for n in test.ranks:
            found[(test.nodeid, n)] = outcomes.get(f"{var}_{n}", run(n))
    return found


def test_every_count_passed_earns_every_point():
    result = score(PLAN, PLAN.tests, runs())
    assert (result["status"], result["score"], result["max_score"]) == ("graded", 6, 6)
    assert [e["status"] for e in result["exercises"]] == ["passed", "passed"]


def test_odd_counts_only_cost_the_test_and_say_so():
    result = score(PLAN, PLAN.tests, runs(ring_3=run(3, "failed", "rank 1: wrong sum")))
    ring = result["exercises"][0]
    assert (result["score"], ring["score"], ring["status"]) == (4, 1, "partial")
    message = ring["tests"][0]["message"]
    assert message.startswith("passes at 1, 2, 4 ranks, fails at 3 ranks. at 3 ranks: rank 1:")
    assert ODD_HINT in message


def test_a_failure_at_an_even_count_gets_no_odd_hint():
    result = score(PLAN, PLAN.tests, runs(ring_2=run(2, "hung", "rank 0 waits in Recv")))
    message = result["exercises"][0]["tests"][0]["message"]
    assert "fails at 2 ranks" in message and ODD_HINT not in message


def test_a_stub_is_not_done_and_a_tampered_run_zeroes_the_submission():
    stub = run(1, "not_done", "not yet done: allreduce_naive still raises NotImplementedError")
    result = score(PLAN, PLAN.tests, runs(naive_1=stub, naive_3=run(3, "not_run", "not run")))
    assert result["exercises"][1]["status"] == "not_done" and result["score"] == 3
    result = score(PLAN, PLAN.tests, runs(traffic_2=run(2, "tampered")))
    assert (result["status"], result["score"]) == ("tampered", 0.0)


def test_an_error_that_is_not_the_learners_leaves_the_grade_incomplete():
    broken = run(2, "error", "mpiexec could not start the ranks")
    result = score(PLAN, PLAN.tests, runs(traffic_2=broken))
    assert result["status"] == "incomplete" and "not the learner's doing" in result["message"]
