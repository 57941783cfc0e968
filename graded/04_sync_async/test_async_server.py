"""Lab 04: ``async_server(comm, params, n_workers, lr)``, the asynchronous parameter server.

Rank 0 runs the learner's server; the other ranks are workers written here (ps_workers.py) whose
gradients keep a ledger in the parameters: which gradient was applied how often, and what each
staleness must be. Records and turn-taking go over a duplicate communicator, so the server never
sees them. A straggler that holds back until the others are done shows a server that waits for
it; and the harm of staleness is graded on lesson 04's least squares at ``HARM_LR``, whose seed
is drawn at each grading (and printed when the test fails).
"""
import random
import time

import numpy as np
import pytest
from ps_workers import (
    collect_records,
    expected_staleness,
    ledger_problem,
    ledger_size,
    paramserver_problem,
    run_worker,
    staleness_problem,
    take_turns,
)

RECORDS = 7


def serve_and_collect(submission, comm, steps, delay_of=lambda rank: 0.0, take_turns=False):
    """Run the learner's server on rank 0 and workers elsewhere; rank 0 gets everything back.

    Returns:
        On rank 0: ``(params, staleness returned, {rank: what that worker saw})``; elsewhere None.
    """
    side = comm.Dup()  # for records and turn-taking, out of the server's sight
    try:
        if comm.rank == 0:
            params = np.zeros(ledger_size(steps), np.float32)
            staleness = submission.async_server(comm, params, comm.size - 1, 1.0)
            seen = collect_records(side, comm.size, RECORDS)
            return params, staleness, seen

        def wait_turn():  # worker r starts after worker r - 1 has finished
            if take_turns and comm.rank > 1:
                side.recv(source=comm.rank - 1, tag=RECORDS + 1)

        seen = run_worker(comm, steps, delay=delay_of(comm.rank), before_first=wait_turn)
        if take_turns and comm.rank < comm.size - 1:
            side.send(None, dest=comm.rank + 1, tag=RECORDS + 1)
        side.send(seen, dest=0, tag=RECORDS)
        return None
    finally:
        side.Free()


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2, 4], timeout=40)
def test_every_gradient_applied_once(submission, comm):
    """Each worker pushes 4 gradients: each is applied exactly once, and all workers finish."""
    steps = [4] * (comm.size - 1)
    result = serve_and_collect(submission, comm, steps, delay_of=lambda rank: 0.002 * (rank > 1))
    if result is None:
        return
    params, staleness, _ = result
    problem = ledger_problem(params, steps)
    assert problem is None, problem
    assert staleness is not None and len(staleness) == sum(steps), (
        f"{sum(steps)} gradients were applied, but the staleness list has "
        f"{'no' if staleness is None else len(staleness)} entries: append one per gradient")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=40)
def test_serves_until_every_worker_is_done(submission, comm):
    """Workers stop at different times (one pushes nothing at 4 ranks): serve until all say done."""
    steps = [1, 6] if comm.size == 3 else [0, 2, 6]
    result = serve_and_collect(submission, comm, steps, delay_of=lambda rank: 0.002 * (rank > 1))
    if result is None:
        return
    problem = ledger_problem(result[0], steps)
    assert problem is None, problem


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[3, 4], timeout=40)
def test_staleness_when_workers_take_turns(submission, comm):
    """Worker 2 starts after worker 1's 3 updates, from version 0: its first staleness is 3."""
    steps = [3] * (comm.size - 1)
    result = serve_and_collect(submission, comm, steps, take_turns=True)
    if result is None:
        return
    params, staleness, seen = result
    problem = ledger_problem(params, steps)
    assert problem is None, problem
    expected = expected_staleness(seen)
    assert expected is not None, "the replies came out of order: reply right after each update"
    problem = staleness_problem(staleness, expected)
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[4], timeout=40)
def test_staleness_when_workers_race(submission, comm):
    """Three workers at once, one slower: each staleness matches what the workers saw."""
    steps = [5, 5, 5]
    result = serve_and_collect(submission, comm, steps, delay_of=lambda rank: 0.003 * (rank == 1))
    if result is None:
        return
    params, staleness, seen = result
    problem = ledger_problem(params, steps)
    assert problem is None, problem
    expected = expected_staleness(seen)
    assert expected is not None, "the replies came out of order: reply right after each update"
    problem = staleness_problem(staleness, expected)
    assert problem is None, problem


STRAGGLER_WAIT_S = 8.0  # how long the straggler holds back for the others (a correct server: ms)
FINISHED = RECORDS + 2


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=40)
def test_a_straggler_slows_only_itself(submission, comm):
    """Worker rank 1 pushes nothing until the others have finished: they are served without it."""
    steps = [2] + [3] * (comm.size - 2)
    side = comm.Dup()
    try:
        if comm.rank == 0:
            params = np.zeros(ledger_size(steps), np.float32)
            staleness = submission.async_server(comm, params, comm.size - 1, 1.0)
            seen = collect_records(side, comm.size, RECORDS)
        elif comm.rank == 1:  # the straggler: waits for every other worker to finish first
            pending = {r: side.irecv(source=r, tag=FINISHED) for r in range(2, comm.size)}

            def hold_back():
                deadline = time.monotonic() + STRAGGLER_WAIT_S
                while time.monotonic() < deadline and not all(
                        pending[r].test()[0] for r in list(pending)):
                    time.sleep(0.002)
                hold_back.unserved = [r for r, request in pending.items() if not request.test()[0]]

            seen = run_worker(comm, steps, before_first=hold_back)
            for request in pending.values():  # the others finish in the end, whatever happened
                request.wait()
            side.send({"seen": seen, "unserved": hold_back.unserved}, dest=0, tag=RECORDS)
            return
        else:
            seen = run_worker(comm, steps, reply_timeout=3 * STRAGGLER_WAIT_S)
            side.send(None, dest=1, tag=FINISHED)
            side.send({"seen": seen}, dest=0, tag=RECORDS)
            return
    finally:
        side.Free()
    problem = ledger_problem(params, steps)
    assert problem is None, problem
    unserved = seen[1]["unserved"]
    assert not unserved, (
        f"worker rank{'s' if len(unserved) > 1 else ''} {', '.join(map(str, unserved))} "
        f"pushed {steps[1]} gradients and got no answer within {STRAGGLER_WAIT_S:g} s while "
        f"worker rank 1, a straggler, had not pushed anything yet: the server waited for the "
        f"straggler (serving the workers in turn?). Probe with source=MPI.ANY_SOURCE and serve "
        f"whichever message is there, so that a straggler slows only itself")
    expected = expected_staleness({r: record["seen"] for r, record in seen.items()})
    assert expected is not None, "the replies came out of order: reply right after each update"
    problem = staleness_problem(staleness, expected)
    assert problem is None, problem


HARM_WORKERS, HARM_STEPS, HARM_BATCH = 4, 8, 16
TOKEN = RECORDS + 3


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[HARM_WORKERS + 1], timeout=60)
def test_stale_gradients_hurt(submission, comm):
    """Least squares at lr = HARM_LR, 4 workers taking turns: the server gives exactly what
    stale_reference computes, and loses more than 1000 x the loss of synchronous training."""
    ps = paramserver_problem()
    HARM_LR, loss = ps.HARM_LR, ps.loss
    seed = comm.bcast(random.SystemRandom().randrange(2 ** 31) if comm.rank == 0 else None)
    problem = ps.make_problem(seed, n_samples=256, n_features=8, kind="least_squares")
    side = comm.Dup()
    try:
        if comm.rank == 0:
            params = np.zeros(problem.n_params, np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                submission.async_server(comm, params, HARM_WORKERS, HARM_LR)
        else:
            grad_fn = ps.make_grad_fn(problem, comm.rank - 1, HARM_WORKERS, HARM_BATCH, seed)
            take_turns(comm, side, grad_fn, problem.n_params, HARM_STEPS, TOKEN)
            return
    finally:
        side.Free()
    case = (f"least squares drawn with seed {seed}, {HARM_WORKERS} workers taking turns, "
            f"{HARM_STEPS} gradients each, lr {HARM_LR:g}")
    start = loss(np.zeros_like(params), problem.X, problem.y, problem.kind)
    sync = loss(ps.serial_reference(problem, HARM_WORKERS, HARM_STEPS, HARM_BATCH, HARM_LR, seed),
                problem.X, problem.y, problem.kind)
    assert sync < start / 5, f"the grader's own synchronous reference did not converge ({case})"
    want = ps.stale_reference(problem, HARM_WORKERS, HARM_STEPS, HARM_BATCH, HARM_LR, seed)
    got = loss(params, problem.X, problem.y, problem.kind)
    ratio = got / sync if np.isfinite(got) else float("inf")
    assert ratio > 1e3, (
        f"with {case}, the server's parameters end at loss {got:.4g}, {ratio:.3g} x the loss of "
        f"synchronous training ({sync:.4g}), where gradients 3 updates stale at this learning rate "
        f"make it diverge (stale_reference: loss {loss(want, problem.X, problem.y, problem.kind):.4g})"
        f": apply each gradient whole, params -= lr * grad, as it arrives (no mean over the "
        f"workers, no waiting for a round)")
    scale = float(np.max(np.abs(want)))
    assert np.allclose(params, want, rtol=1e-5, atol=1e-6 * scale, equal_nan=True), (
        f"with {case}, the server's parameters differ from stale_reference's by up to "
        f"{float(np.max(np.abs(params - want))):.3g} (of {scale:.3g}): apply each gradient once, "
        f"in the order the gradients arrive, and answer its worker with the parameters just after")
