"""One LSTM layer over a packed batch as one Chainer function (dlhack.model.fused_lstm)."""
import numpy as np
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
