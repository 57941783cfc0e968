"""One LSTM layer over a packed batch as one Chainer function (dlhack.model.fused_lstm)."""
import chainer
import chainer.functions as F
import numpy as np
import pytest
from chainer import gradient_check

from dlhack.model.fused_lstm import lstm_layer
from dlhack.model.packing import Packing
from tests.model.batches import elementwise


def test_lstm_layer_gradient_with_dropout_mask():
    rng = np.random.RandomState(1)
    packing = Packing([3, 1, 2])
    n, B, H, n_in = packing.n, 3, 2, 3
    mask = (rng.rand(n, n_in) > 0.3) / 0.7
    inputs = [rng.randn(n, n_in), rng.randn(B, H), rng.randn(B, H), rng.randn(4 * H, n_in),
              rng.randn(4 * H, H), rng.randn(4 * H)]
    grads = [rng.randn(n, H), rng.randn(B, H), rng.randn(B, H)]
    gradient_check.check_backward(lambda *a: lstm_layer(*a, packing, mask), inputs, grads,
                                  dtype=np.float64, atol=1e-6, rtol=1e-5)


def test_lstm_layer_frees_its_arrays_after_backward_and_refuses_a_second():
    rng = np.random.RandomState(2)
    packing = Packing([2, 2])
    x, h0, c0 = (chainer.Variable(rng.randn(*s).astype(np.float32))
                 for s in ((4, 3), (2, 2), (2, 2)))
    w_x, w_h, b = rng.randn(8, 3), rng.randn(8, 2), rng.randn(8)
    hs, h, c = lstm_layer(x, h0, c0, *(a.astype(np.float32) for a in (w_x, w_h, b)), packing)
    node = hs.creator
    loss = F.sum(hs) + F.sum(h * c)
    loss.backward(retain_grad=True)
    assert node.act is None and node.cs is None and node.x is None
    assert x.grad.shape == (4, 3) and np.abs(x.grad).sum() > 0
    with pytest.raises(RuntimeError, match="once per forward"):
        loss.backward()


def layer_and_grads(lengths, scale, with_state_grads, seed=3, H=8, n_in=6):
    """One float32 layer's outputs and its six inputs' gradients, with a dropout mask."""
    rng = np.random.RandomState(seed)
    packing = Packing(lengths)
    n, B = packing.n, len(lengths)
    inputs = [chainer.Variable(a.astype(np.float32)) for a in (
        rng.randn(n, n_in), rng.randn(B, H), rng.randn(B, H), scale * rng.randn(4 * H, n_in),
        scale * rng.randn(4 * H, H), rng.randn(4 * H))]
    mask = ((rng.rand(n, n_in) > 0.3) / 0.7).astype(np.float32)
    outs = lstm_layer(*inputs, packing, mask)
    weights = [rng.randn(*o.shape).astype(np.float32) for o in outs]
    used = outs if with_state_grads else outs[:1]
    sum(F.sum(o * w) for o, w in zip(used, weights)).backward()
    return [o.array for o in outs] + [v.grad for v in inputs]


@pytest.mark.parametrize("lengths", [[5, 3, 3, 1], [1], [4, 4]])
@pytest.mark.parametrize("scale", [0.5, 30.0])  # 30: saturated gates, exp overflowing to inf
@pytest.mark.parametrize("with_state_grads", [True, False])
def test_compiled_steps_equal_the_numpy_steps(monkeypatch, lengths, scale, with_state_grads):
    elementwise(monkeypatch, "numpy")
    want = layer_and_grads(lengths, scale, with_state_grads)
    elementwise(monkeypatch, "compiled")
    got = layer_and_grads(lengths, scale, with_state_grads)
    names = ["hs", "h", "c", "gx", "gh0", "gc0", "gw_x", "gw_h", "gb"]
    for name, g, w in zip(names, got, want):
        assert np.isfinite(g).all(), name
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=2e-5 * max(1, np.abs(w).max()),
                                   err_msg=name)
