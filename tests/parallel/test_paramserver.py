"""The parameter server: every gradient applied once, true staleness, no hang, sync == allreduce.

MPI tests run in their own mpiexec (pytest-isolate-mpi) with a timeout, so a server that never
stops fails the test instead of hanging the suite.
"""
import json

import numpy as np
import pytest

from dlhack.parallel import paramserver as ps


@pytest.mark.mpi(ranks=[2, 3, 4], timeout=60)
def test_sync_server_equals_allreduce_and_serial(mpi_comm):
    """Same workers, data and seed: sync PS, allreduce and the serial reference agree."""
    n_steps = 15
    kwargs = {"batchsize": 16, "lr": 0.5, "seed": 1, "n_samples": 512, "n_features": 6}
    results = ps.compare(mpi_comm, ("sync", "allreduce"), n_steps=n_steps, **kwargs)
    if mpi_comm.rank != 0:
        assert results == {}
        return
    sync, allreduce = results["sync"], results["allreduce"]
    n_workers = mpi_comm.size - 1
    assert sync["n_workers"] == allreduce["n_workers"] == n_workers
    assert sync["pushed"] == sync["applied"] == n_workers * n_steps
    assert sync["updates"] == allreduce["updates"] == n_steps
    assert sync["staleness"] == [0] * (n_workers * n_steps)
    assert sorted(set(sync["sources"])) == list(range(1, n_workers + 1))
    problem = ps.make_problem(1, 512, 6)
    serial = ps.serial_reference(problem, n_workers, n_steps, kwargs["batchsize"], kwargs["lr"], 1)
    assert np.allclose(sync["params"], serial, rtol=1e-5, atol=1e-7)
    assert np.allclose(allreduce["params"], serial, rtol=1e-5, atol=1e-7)
    assert np.allclose(sync["curve"]["loss"], allreduce["curve"]["loss"], rtol=1e-5)


def onehot_grad_fn(n_params, slot, seen):
    """Gradient of step s: +1 in this worker's slot for s, -1 in slot 0 (the update counter).

    With lr = 1 the server's params[0] counts updates and params[slot] = -(times applied).
    ``seen`` gets the counter of the parameters each gradient was computed on.
    """
    def grad_fn(params, step):
        seen.append(int(params[0]))
        grad = np.zeros(n_params, np.float32)
        grad[0], grad[slot(step)] = -1, 1
        return grad

    return grad_fn


@pytest.mark.mpi(ranks=[2, 4], timeout=60)
def test_async_server_applies_each_gradient_once_with_true_staleness(mpi_comm):
    """Uneven step counts and a slow worker: exact counts, staleness, and everyone terminates."""
    rank, n_workers = mpi_comm.rank, mpi_comm.size - 1
    steps = [3 + 2 * w for w in range(n_workers)]  # workers stop at different times
    offsets = np.cumsum([1] + steps)
    n_params = int(offsets[-1])
    params = np.zeros(n_params, np.float32)
    if rank == 0:
        staleness, sources = ps.async_server(mpi_comm, params, n_workers, lr=1.0)
        mine = None
    else:
        seen, w = [], rank - 1
        grad_fn = onehot_grad_fn(n_params, lambda s: offsets[w] + s, seen)
        pushed = ps.worker_loop(mpi_comm, params, grad_fn, steps[w], delay=0.002 * (w == 0))
        after = seen[1:] + [int(params[0])]  # the counter after each of this worker's updates
        mine = {"pushed": pushed, "updates": after, "seen": seen}
    gathered = mpi_comm.gather(mine, root=0)
    if rank != 0:
        return
    assert len(staleness) == len(sources) == sum(steps)
    assert np.array_equal(params[1:], -np.ones(n_params - 1)), "some gradient not applied once"
    assert params[0] == sum(steps)
    expected = [None] * sum(steps)
    for src, got in enumerate(gathered[1:], start=1):
        assert got["pushed"] == steps[src - 1]
        for k, seen in zip(got["updates"], got["seen"]):
            expected[k - 1] = (k - 1 - seen, src)  # updates made since this worker's pull
    assert [s for s, _ in expected] == staleness
    assert [src for _, src in expected] == sources
    assert min(staleness) >= 0


def rounds_of(sources):
    """A sync server's senders, split into rounds (each round lists its workers in rank order)."""
    rounds = []
    for src in sources:
        if not rounds or src <= rounds[-1][-1]:
            rounds.append([])
        rounds[-1].append(src)
    return rounds


def test_rounds_of_splits_where_the_rank_order_restarts():
    assert rounds_of([1, 2, 1, 2, 2, 2]) == [[1, 2], [1, 2], [2], [2]]


@pytest.mark.mpi(ranks=[3], timeout=60)
def test_cli_straggler_run_writes_json(mpi_comm, mpi_tmp_path):
    """The documented command, with a time budget: the straggler's async gradients go stale."""
    from mpi4py import MPI

    if mpi_comm.size != MPI.COMM_WORLD.size:
        pytest.skip("needs COMM_WORLD")
    path = mpi_tmp_path / "ps.json"
    ps.main(["--steps", "10000", "--seconds", "0.4", "--straggler", "1", "--delay", "0.02",
             "--json", str(path)])
    mpi_comm.Barrier()
    if mpi_comm.rank != 0:
        return
    results = json.loads(path.read_text())
    assert sorted(results) == ["allreduce", "async", "sync"]
    for mode in ("sync", "async"):
        r = results[mode]
        assert r["applied"] == r["pushed"] == len(r["staleness"]) > 0
        assert min(r["staleness"]) >= 0
    sync, asyn = results["sync"], results["async"]
    assert set(sync["staleness"]) == {0}
    # Every sync round, while the straggler (worker 1) still pushes, waits for its gradient; it
    # sleeps 0.02 s a step, so it makes at most 0.4 / 0.02 + 1 of them. (After its budget ends
    # the fast worker may go on alone: under load the two clocks start apart.)
    rounds = rounds_of(sync["sources"])
    last = max(i for i, r in enumerate(rounds) if 1 in r)
    assert all(1 in r for r in rounds[:last + 1]), "sync rounds must wait for the straggler"
    assert last + 1 <= 0.4 / 0.02 + 2
    slow = [s for s, src in zip(asyn["staleness"], asyn["sources"]) if src == 1]
    fast = [s for s, src in zip(asyn["staleness"], asyn["sources"]) if src == 2]
    assert len(fast) > len(slow), "the fast worker should push more gradients than the straggler"
    assert max(slow) >= 1, "the straggler's gradients should arrive after others' updates"
    assert results["allreduce"]["updates"] <= 0.4 / 0.02 + 2
