"""Lab 04: ``async_server(comm, params, n_workers, lr)``, the asynchronous parameter server.

Rank 0 runs the learner's server; the other ranks are workers written here (ps_workers.py) whose
gradients keep a ledger in the parameters: which gradient was applied how often, and what each
staleness must be. Records and turn-taking go over a duplicate communicator, so the server never
sees them.
"""
import numpy as np
import pytest
from ps_workers import (
    collect_records,
    expected_staleness,
    ledger_problem,
    ledger_size,
    run_worker,
    staleness_problem,
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
