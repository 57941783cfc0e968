"""The problem the parameter server (``paramserver``) trains, and one-process references.

    problem = make_problem(seed=0)                       # the same data on every rank
    grad_fn = make_grad_fn(problem, worker, n_workers, batchsize, seed)
    params = serial_reference(problem, n_workers, n_steps, batchsize, lr)   # synchronous
    params = stale_reference(problem, n_workers, n_steps, batchsize, lr)    # async, in turns

Logistic regression on synthetic data made from a seed: a gradient costs microseconds, so in
lesson 04's curves what shows is the protocol, not the arithmetic. The model is a flat float32
vector of ``n = n_features + 1`` parameters (weights, then the bias): that vector, ``4 n``
bytes, is what every message of the parameter server carries.

``kind="least_squares"`` makes a linear regression instead, whose loss grows with the square of
the weights: with unit-variance features its curvature is about 1 in every direction, so the
stability limits of lesson 04 (``lr * h < 2`` fresh, ``< 1`` one update stale, ``< 0.618`` two)
read directly as learning rates. At ``HARM_LR`` synchronous training converges and asynchronous
training with staleness diverges (tests/parallel/test_paramserver_problem.py, over seeds).

Cost: nothing is sent. Every rank makes the whole data set from the seed, and each worker's
shard and each step's minibatch depend only on (seed, worker, step), so every mode of
``paramserver`` and the one-process ``serial_reference`` see the same batches.
"""
from dataclasses import dataclass

import numpy as np

KINDS = ("logistic", "least_squares")
HARM_LR = 1.0  # least squares: sync converges, async with staleness >= 1 diverges


@dataclass
class Problem:
    """Data: ``X`` (n_samples, n_features) float32; ``y`` (n_samples,) 0/1 labels (logistic) or
    real targets (least squares); ``kind``, one of ``KINDS``."""

    X: np.ndarray
    y: np.ndarray
    kind: str = "logistic"

    @property
    def n_params(self):
        return self.X.shape[1] + 1  # weights, then the bias


def make_problem(seed=0, n_samples=2048, n_features=16, kind="logistic"):
    """Data from ``seed`` around a random hyperplane: its labels with 10% flipped (logistic), or
    its values plus noise of standard deviation 0.5 (least squares)."""
    if kind not in KINDS:
        raise ValueError(f"kind must be one of {KINDS}, not {kind!r}")
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features)).astype(np.float32)
    w = rng.standard_normal(n_features)
    if kind == "least_squares":
        y = (X @ w + 0.5 + 0.5 * rng.standard_normal(n_samples)).astype(np.float32)
        return Problem(X, y, kind)
    y = (X @ w + 0.5 > 0).astype(np.float32)
    flip = rng.random(n_samples) < 0.1
    y[flip] = 1 - y[flip]
    return Problem(X, y, kind)


def loss(params, X, y, kind="logistic"):
    """Mean loss of ``params`` (weights then bias) on ``(X, y)``: logistic, or half the mean
    squared error; ``inf`` or ``nan`` once a diverging run has overflowed."""
    with np.errstate(over="ignore", invalid="ignore"):
        z = X @ params[:-1] + params[-1]
        if kind == "least_squares":
            return float(np.mean((z.astype(np.float64) - y) ** 2) / 2)
        return float(np.mean(np.logaddexp(0.0, z) - y * z))


def gradient(params, X, y, kind="logistic"):
    """Gradient of ``loss`` with respect to ``params``, float32 like them."""
    with np.errstate(over="ignore", invalid="ignore"):  # a diverging run overflows: let it
        z = X @ params[:-1] + params[-1]
        p = z if kind == "least_squares" else 1.0 / (1.0 + np.exp(-z))
        err = (p - y) / len(y)
        return np.append(X.T @ err, err.sum()).astype(np.float32)


def make_grad_fn(problem, worker, n_workers, batchsize, seed=0):
    """``grad_fn(params, step)`` for ``worker`` of ``n_workers``: a minibatch of its shard.

    The shard and each step's minibatch depend only on (seed, worker, step), so every mode
    (and the serial reference) sees the same batches.
    """
    order = np.random.default_rng(seed).permutation(len(problem.y))
    shard = np.array_split(order, n_workers)[worker]

    def grad_fn(params, step):
        idx = shard[np.random.default_rng([seed, worker, step]).integers(0, len(shard), batchsize)]
        return gradient(params, problem.X[idx], problem.y[idx], problem.kind)

    return grad_fn


def serial_reference(problem, n_workers, n_steps, batchsize, lr, seed=0):
    """Synchronous training simulated in one process: what sync PS and allreduce must match."""
    params = np.zeros(problem.n_params, np.float32)
    grad_fns = [make_grad_fn(problem, w, n_workers, batchsize, seed) for w in range(n_workers)]
    for step in range(n_steps):
        total = np.zeros_like(params)
        for grad_fn in grad_fns:
            total += grad_fn(params, step)
        params -= lr * (total / n_workers)
    return params


def stale_reference(problem, n_workers, n_steps, batchsize, lr, seed=0):
    """Asynchronous training simulated in one process, the workers' gradients arriving in turn.

    Worker 0, 1, ..., n_workers - 1, then worker 0 again: each gradient is computed on the
    parameters its worker pulled after its own previous update, so after the first round every
    gradient is ``n_workers - 1`` updates stale (the first round's are 0, 1, ...). What an
    asynchronous server computes when its equally fast workers take turns.
    """
    params = np.zeros(problem.n_params, np.float32)
    grad_fns = [make_grad_fn(problem, w, n_workers, batchsize, seed) for w in range(n_workers)]
    pulled = [params.copy() for _ in range(n_workers)]  # what each worker holds
    with np.errstate(over="ignore", invalid="ignore"):
        for step in range(n_steps):
            for worker, grad_fn in enumerate(grad_fns):
                params -= lr * grad_fn(pulled[worker], step)
                pulled[worker] = params.copy()
    return params
