"""The parameter server's problem (dlhack.parallel.paramserver_problem): the gradient against
finite differences, batches drawn from the seed alone, and a serial reference that learns."""
import numpy as np

from dlhack.parallel import paramserver_problem as pp


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
