"""One LSTM layer over a packed batch as one Chainer function (dlhack.model.fused_lstm)."""
import chainer
import chainer.functions as F
import numpy as np
import pytest
from chainer import gradient_check

from dlhack.model.fused_lstm import lstm_layer
from dlhack.model.packing import Packing


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
    assert node.act is None and node.hs is None and node.x is None
    assert x.grad.shape == (4, 3) and np.abs(x.grad).sum() > 0
    with pytest.raises(RuntimeError, match="once per forward"):
        loss.backward()
