"""The fused output layer and softmax cross-entropy: the loss and gradients of the plain formula,
whatever the block size, computed in forward and handed over once by backward.
(Against the readable translator: test_fused.py.)"""
import chainer
import numpy as np
import pytest
from chainer import gradient_check

from dlhack.model import fused_output
from dlhack.model.fused_output import OutputLoss
from dlhack.model.seq2seq import PAD

TARGETS = np.array([1, PAD, 0, 4, PAD, 5, 2], np.int32)


def inputs_and_mask(seed=2, n=7, units=3, vocab=6):
    rng = np.random.RandomState(seed)
    inputs = [rng.randn(n, units), rng.randn(vocab, units), rng.randn(vocab)]
    return inputs, (rng.rand(n, units) > 0.5) * 2.0


def plain(x, W, b, mask, targets, normalizer, g=1.0):
    """The loss and its gradients by the formula, all tokens at once (numpy, float64)."""
    xm = x * mask
    logits = xm @ W.T + b
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    valid = targets != PAD
    loss = -sum(np.log(p[i, t]) for i, t in enumerate(targets) if t != PAD) / normalizer
    d = p.copy()
    d[np.arange(len(d)), np.where(valid, targets, 0)] -= 1
    d *= valid[:, None] * g / normalizer
    return loss, (d @ W * mask, d.T @ xm, d.sum(axis=0))


@pytest.mark.parametrize("rows", [1, 3, fused_output.ROWS])
def test_loss_and_gradients_are_the_formulas_whatever_the_block(rows, monkeypatch):
    monkeypatch.setattr(fused_output, "ROWS", rows)
    (x, W, b), mask = inputs_and_mask()
    variables = [chainer.Variable(a.copy()) for a in (x, W, b)]
    loss, = OutputLoss(TARGETS, 2, mask).apply(variables)
    loss.grad = np.array(1.3)
    loss.backward()
    want_loss, want_grads = plain(x, W, b, mask, TARGETS, 2, g=1.3)
    assert float(loss.array) == pytest.approx(want_loss, rel=1e-12)
    for v, want in zip(variables, want_grads):
        np.testing.assert_allclose(v.grad, want, rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("rows", [2, fused_output.ROWS])
def test_numerical_gradient_ignores_padding(rows, monkeypatch):
    monkeypatch.setattr(fused_output, "ROWS", rows)
    inputs, mask = inputs_and_mask(seed=3, n=5)

    def loss(x, W, b):
        return OutputLoss(TARGETS[:5], 2, mask).apply((x, W, b))[0]

    gradient_check.check_backward(loss, inputs, np.array(1.3), dtype=np.float64,
                                  atol=1e-6, rtol=1e-5)


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])  # float32: elementwise.c, or not
@pytest.mark.parametrize("rows", [3, fused_output.ROWS])
def test_without_mask_float32(kernels, rows, monkeypatch):
    if kernels == "numpy":
        monkeypatch.setenv("DLHACK_KERNELS", "numpy")
    monkeypatch.setattr(fused_output, "ROWS", rows)
    (x, W, b), _ = inputs_and_mask(seed=4)
    x, W, b = (a.astype(np.float32) for a in (x, W, b))
    b[2] = 100.0  # exp would overflow: the row's maximum is taken off first
    variables = [chainer.Variable(a) for a in (x, W, b)]
    loss, = OutputLoss(TARGETS, 3).apply(variables)
    loss.backward()
    exact = (a.astype(np.float64) for a in (x, W, b))  # float32 probabilities would be 0
    want_loss, want_grads = plain(*exact, np.ones(x.shape), TARGETS, 3)
    assert loss.dtype == np.float32 and float(loss.array) == pytest.approx(want_loss, rel=1e-5)
    for v, want in zip(variables, want_grads):
        assert v.grad.dtype == np.float32
        np.testing.assert_allclose(v.grad, want, rtol=1e-4, atol=1e-6)


@pytest.mark.parametrize("with_mask", [True, False])
def test_overwrite_puts_the_same_gradient_over_the_features(with_mask):
    (x, W, b), mask = inputs_and_mask(seed=5)
    mask = mask if with_mask else None
    results = []
    for overwrite in (False, True):
        variables = [chainer.Variable(a.copy()) for a in (x, W, b)]
        loss, = OutputLoss(TARGETS, 2, mask, overwrite=overwrite).apply(variables)
        loss.backward()
        results.append([loss.array] + [v.grad for v in variables])
    for got, want in zip(results[1], results[0]):
        np.testing.assert_allclose(got, want, rtol=1e-12)
    assert results[1][1] is variables[0].array  # over the features, not a new array
    assert not np.allclose(variables[0].array, x)


def test_without_backprop_only_the_loss_is_computed():
    (x, W, b), mask = inputs_and_mask()
    node = OutputLoss(TARGETS, 2, mask)
    with chainer.no_backprop_mode():
        loss, = node.apply((x, W, b))
    assert node.grads is None
    assert float(loss.array) == pytest.approx(plain(x, W, b, mask, TARGETS, 2)[0], rel=1e-12)


def test_forward_keeps_no_mask_and_backward_hands_its_gradients_over_once():
    (x, W, b), mask = inputs_and_mask()
    node = OutputLoss(TARGETS, 2, mask)
    variables = [chainer.Variable(a) for a in (x, W, b)]
    loss, = node.apply(variables)
    assert node.mask is None
    assert [g.shape for g in node.grads] == [x.shape, W.shape, b.shape]
    loss.backward()
    assert node.grads is None
    with pytest.raises(RuntimeError, match="once per forward"):
        node.backward((0, 1, 2), (chainer.Variable(np.array(1.0)),))
