"""What the model room's tests (and the split models' in tests/parallel) share: random batches of
word ids, a loss with its gradients, and Adam steps taken by two models side by side."""
import chainer
import numpy as np
import pytest

V = 40  # the vocabulary of the random batches: ids 3..V-1 (0-2 are PAD, BOS, EOS)


def random_batch(rng, n, max_len=9):
    """``n`` (source, target) pairs of random lengths 1..max_len-1, as two lists of int32 arrays."""
    xs = [rng.randint(3, V, size=rng.randint(1, max_len)).astype(np.int32) for _ in range(n)]
    ys = [rng.randint(3, V, size=rng.randint(1, max_len)).astype(np.int32) for _ in range(n)]
    return xs, ys


def loss_and_grads(model, xs, ys):
    """The model's loss on the batch, and a copy of every parameter's gradient by name."""
    model.cleargrads()
    loss = model(xs, ys)
    loss.backward()
    return float(loss.array), {name: p.grad.copy() for name, p in model.namedparams()}


def sentence_pairs(n_src, n_tgt, seed=0, n=5):
    """``n`` source/target pairs of different lengths (sources 2-8 words, targets 1-7), with ids
    below ``n_src`` and ``n_tgt``: padding must not change what a split model computes."""
    rng = np.random.RandomState(seed)
    xs = [rng.randint(3, n_src, size=rng.randint(2, 9)).astype(np.int32) for _ in range(n)]
    ys = [rng.randint(3, n_tgt, size=rng.randint(1, 8)).astype(np.int32) for _ in range(n)]
    return xs, ys


def assert_same_loss_and_grads(got, want, rtol, atol):
    """``got`` and ``want`` are ``loss_and_grads`` results: equal losses, and equal gradients
    for the same parameter names, within the tolerances."""
    assert got[0] == pytest.approx(want[0], rel=rtol)
    assert got[1].keys() == want[1].keys()
    for name in want[1]:
        np.testing.assert_allclose(got[1][name], want[1][name], rtol=rtol, atol=atol,
                                   err_msg=name)


def adam_side_by_side(models, n_src, n_tgt, grads=loss_and_grads, steps=3):
    """``steps`` Adam updates of each model on the same ``sentence_pairs`` batches, each
    step's gradients made by ``grads(model, xs, ys)``."""
    optimizers = [chainer.optimizers.Adam(alpha=0.01).setup(model) for model in models]
    for step in range(steps):
        xs, ys = sentence_pairs(n_src, n_tgt, seed=step)
        for model, optimizer in zip(models, optimizers):
            grads(model, xs, ys)
            optimizer.update()


def elementwise(monkeypatch, path):
    """Run the fused model's elementwise work on ``path``, "numpy" or "compiled" (``elementwise.c``,
    dlhack.model.ckernels); skips where it cannot build (test_ckernels then fails if a C
    compiler is there)."""
    from dlhack.model.ckernels import describe, kernels

    monkeypatch.setenv("DLHACK_KERNELS", path)
    if path == "compiled" and kernels() is None:
        pytest.skip(describe())
