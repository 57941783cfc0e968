"""The parameter server's problem (dlhack.parallel.paramserver_problem): the gradient against
finite differences, batches drawn from the seed alone, a serial reference that learns; and
staleness that hurts: on the least-squares problem at ``HARM_LR``, synchronous training and a
single fresh worker converge while asynchronous training with stale gradients diverges, for
every seed; at a small learning rate staleness does no harm.

The one-process references make the property deterministic (``stale_reference``: equally fast
workers taking turns); the MPI test checks the real asynchronous server, whose staleness depends
on timing, at 4 workers, where it is about 3 (the stable limit of ``lr * h`` is then 0.445).
"""
import json

import numpy as np
import pytest

from dlhack.parallel import paramserver as ps
from dlhack.parallel import paramserver_problem as pp
from dlhack.parallel.paramserver_problem import HARM_LR

SEEDS = range(6)


def ratio(problem, params):
    """The loss of ``params`` over the loss at the start (zeros): < 1 learned, >> 1 diverged."""
    start = ps.loss(np.zeros(problem.n_params, np.float32), problem.X, problem.y, problem.kind)
    final = ps.loss(params, problem.X, problem.y, problem.kind)
    return final / start if np.isfinite(final) else np.inf


def test_least_squares_gradient_matches_finite_differences():
    problem = ps.make_problem(seed=3, n_samples=64, n_features=5, kind="least_squares")
    X, y = problem.X.astype(np.float64), problem.y.astype(np.float64)
    params = np.random.default_rng(0).standard_normal(problem.n_params)
    eps = 1e-6

    def f(p):
        return ps.loss(p, X, y, "least_squares")

    numeric = [(f(params + eps * e) - f(params - eps * e)) / (2 * eps) for e in np.eye(len(params))]
    assert np.allclose(ps.gradient(params, X, y, "least_squares"), numeric, rtol=1e-4, atol=1e-6)
    with pytest.raises(ValueError, match="kind"):
        ps.make_problem(kind="hinge")


def test_stale_reference_has_the_staleness_of_workers_taking_turns():
    """Worker w's k-th gradient is computed on the parameters after its own (k-1)-th update."""
    problem = ps.make_problem(seed=0, n_samples=128, n_features=3, kind="least_squares")
    n_workers, n_steps, lr = 3, 4, 0.05
    grad_fns = [ps.make_grad_fn(problem, w, n_workers, 8, 0) for w in range(n_workers)]
    params, history = np.zeros(problem.n_params, np.float32), []
    for step in range(n_steps):
        for w in range(n_workers):
            version = step * n_workers + w  # updates made before this one
            stale = w if step == 0 else n_workers - 1
            seen = history[version - stale - 1] if version - stale > 0 else np.zeros_like(params)
            params = params - lr * grad_fns[w](seen, step)
            history.append(params.copy())
    got = ps.stale_reference(problem, n_workers, n_steps, 8, lr, 0)
    np.testing.assert_allclose(got, params, rtol=1e-6, atol=1e-7)
    one = ps.stale_reference(problem, 1, 5, 8, lr, 0)  # one worker: plain SGD, never stale
    np.testing.assert_allclose(one, ps.serial_reference(problem, 1, 5, 8, lr, 0), rtol=1e-6)


@pytest.mark.parametrize("n_workers", [2, 4])
def test_stale_updates_diverge_where_fresh_ones_converge_for_every_seed(n_workers):
    n_steps = 60
    for seed in SEEDS:
        problem = ps.make_problem(seed, kind="least_squares")
        sync = ratio(problem, ps.serial_reference(problem, n_workers, n_steps, 32, HARM_LR, seed))
        fresh = ratio(problem, ps.stale_reference(problem, 1, n_workers * n_steps, 32, HARM_LR,
                                                  seed))
        stale = ratio(problem, ps.stale_reference(problem, n_workers, n_steps, 32, HARM_LR, seed))
        where = f"seed {seed}, {n_workers} workers: sync {sync:.3g}, fresh {fresh:.3g}, " \
                f"stale {stale:.3g}"
        assert sync < 0.1 and fresh < 0.2, where
        assert stale > 1e6, where
        # The same gradients at a tenth of the rate: staleness does no harm.
        calm = ratio(problem, ps.stale_reference(problem, n_workers, n_steps, 32, HARM_LR / 10,
                                                 seed))
        assert calm < 0.1, f"{where}, at lr {HARM_LR / 10}: {calm:.3g}"


@pytest.mark.mpi(ranks=[5], timeout=90)
def test_the_real_async_server_diverges_at_harm_lr_while_sync_converges(mpi_comm, mpi_tmp_path):
    """The module docstring's command (4 workers), two seeds: async's loss ends far above its
    start, sync's far below."""
    from mpi4py import MPI

    if mpi_comm.size != MPI.COMM_WORLD.size:
        pytest.skip("needs COMM_WORLD")
    for seed in (0, 1):
        path = mpi_tmp_path / f"harm{seed}.json"
        ps.main(["--kind", "least_squares", "--lr", str(HARM_LR), "--modes", "sync", "async",
                 "--steps", "100", "--seed", str(seed), "--json", str(path)])
        mpi_comm.Barrier()
        if mpi_comm.rank != 0:
            continue
        results = json.loads(path.read_text())
        problem = ps.make_problem(seed, kind="least_squares")
        sync = ratio(problem, np.array(results["sync"]["params"], np.float32))
        stale = ratio(problem, np.array(results["async"]["params"], np.float32))
        hist = results["async"]["staleness_hist"]
        assert sync < 0.1, f"seed {seed}: sync {sync:.3g}"
        assert stale > 1e3, f"seed {seed}: async {stale:.3g}, staleness histogram {hist}"


def test_gradient_matches_finite_differences():
    problem = pp.make_problem(seed=3, n_samples=64, n_features=5)
    X, y = problem.X.astype(np.float64), problem.y.astype(np.float64)
    params = np.random.default_rng(0).standard_normal(problem.n_params)
    eps = 1e-6
    numeric = [(pp.loss(params + eps * e, X, y) - pp.loss(params - eps * e, X, y)) / (2 * eps)
               for e in np.eye(len(params))]
    assert np.allclose(pp.gradient(params, X, y), numeric, rtol=1e-4, atol=1e-6)


def test_batches_depend_on_seed_worker_and_step_only():
    problem = pp.make_problem(seed=0, n_samples=256)
    params = np.zeros(problem.n_params, np.float32)
    a = pp.make_grad_fn(problem, 1, 3, batchsize=8, seed=5)
    b = pp.make_grad_fn(problem, 1, 3, batchsize=8, seed=5)
    other = pp.make_grad_fn(problem, 2, 3, batchsize=8, seed=5)
    assert np.array_equal(a(params, 4), b(params, 4))
    assert not np.array_equal(a(params, 4), a(params, 5))
    assert not np.array_equal(a(params, 4), other(params, 4))


def test_serial_reference_learns():
    problem = pp.make_problem(seed=0)
    start = pp.loss(np.zeros(problem.n_params, np.float32), problem.X, problem.y)
    params = pp.serial_reference(problem, n_workers=2, n_steps=50, batchsize=32, lr=0.5)
    assert pp.loss(params, problem.X, problem.y) < 0.8 * start
