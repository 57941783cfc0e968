"""The fast LSTM layer (dlhack.model.lstm): its forward against Chainer's own ``F.lstm`` step by
step, and its hand-written backward against numerical gradients. (Against ``NStepLSTM`` inside
the translator: test_seq2seq.py.)"""
import chainer.functions as F
import numpy as np
from chainer import gradient_check

from dlhack.model.lstm import lstm_sequence


def test_lstm_sequence_gradient():
    rng = np.random.RandomState(1)
    T, B, H = 4, 3, 2
    inputs = [rng.randn(T, B, 4 * H), rng.randn(B, H), rng.randn(B, H), rng.randn(4 * H, H)]
    grads = [rng.randn(T, B, H), rng.randn(T, B, H)]
    gradient_check.check_backward(lambda *a: lstm_sequence(*a), inputs, grads,
                                  dtype=np.float64, atol=1e-6, rtol=1e-5)


def test_forward_matches_chainer_lstm_step_by_step():
    rng = np.random.RandomState(0)
    T, B, H = 5, 3, 4
    xw, w_h = rng.randn(T, B, 4 * H), rng.randn(4 * H, H)
    h, c = rng.randn(B, H), rng.randn(B, H)
    hs, cs = lstm_sequence(xw, h, c, w_h)
    for t in range(T):
        gates = xw[t] + h @ w_h.T  # (B, 4H), gate-major [a, i, f, o]
        interleaved = gates.reshape(B, 4, H).transpose(0, 2, 1).reshape(B, 4 * H)  # F.lstm's
        c, h = (v.array for v in F.lstm(c, interleaved))
        np.testing.assert_allclose(hs.array[t], h, rtol=1e-10, err_msg=f"h at step {t}")
        np.testing.assert_allclose(cs.array[t], c, rtol=1e-10, err_msg=f"c at step {t}")
