"""The problem the parameter server (``paramserver``) trains, and the serial reference to match.

    problem = make_problem(seed=0)                       # the same data on every rank
    grad_fn = make_grad_fn(problem, worker, n_workers, batchsize, seed)
    params = serial_reference(problem, n_workers, n_steps, batchsize, lr)

Logistic regression on synthetic data made from a seed: a gradient costs microseconds, so in
lesson 04's curves what shows is the protocol, not the arithmetic. The model is a flat float32
vector of ``n = n_features + 1`` parameters (weights, then the bias): that vector, ``4 n``
bytes, is what every message of the parameter server carries.

Cost: nothing is sent. Every rank makes the whole data set from the seed, and each worker's
shard and each step's minibatch depend only on (seed, worker, step), so every mode of
``paramserver`` and the one-process ``serial_reference`` see the same batches.
"""
from dataclasses import dataclass

import numpy as np


@dataclass
class Problem:
    """Logistic regression data: ``X`` (n_samples, n_features) float32, ``y`` (n_samples,) 0/1."""

    X: np.ndarray
    y: np.ndarray

    @property
    def n_params(self):
        return self.X.shape[1] + 1  # weights, then the bias


def make_problem(seed=0, n_samples=2048, n_features=16):
    """Linearly separable-ish data from ``seed``: labels of a random hyperplane, 10% flipped."""
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n_samples, n_features)).astype(np.float32)
    w = rng.standard_normal(n_features)
    y = (X @ w + 0.5 > 0).astype(np.float32)
    flip = rng.random(n_samples) < 0.1
    y[flip] = 1 - y[flip]
    return Problem(X, y)


def loss(params, X, y):
    """Mean logistic loss of ``params`` (weights then bias) on ``(X, y)``."""
    z = X @ params[:-1] + params[-1]
    return float(np.mean(np.logaddexp(0.0, z) - y * z))


def gradient(params, X, y):
    """Gradient of ``loss`` with respect to ``params``, float32 like them."""
    p = 1.0 / (1.0 + np.exp(-(X @ params[:-1] + params[-1])))
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
        return gradient(params, problem.X[idx], problem.y[idx])

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
