"""A whole LSTM layer over a sequence as one Chainer function (the fast path of ``seq2seq``).

Chainer's CPU ``NStepLSTM`` (the reference, kept in ``seq2seq`` as ``impl="nstep"``) builds a
graph of about a dozen small functions at every time step, re-stacking the eight weight matrices
each time. Here the layer is split the way cuDNN splits it:

1. the input projection of every time step is one matrix product done by the caller,
   ``xw = x @ W_x.T + b`` of shape (T, B, 4H);
2. this function runs only the recurrence, in plain ``xp`` (numpy or cupy) code:
   ``g_t = xw_t + h_{t-1} @ W_h.T``; ``c_t = a*i + f*c_{t-1}``; ``h_t = o*tanh(c_t)``;
3. in backward, the gradient of ``W_h`` is one product over all time steps,
   ``dW_h = dG.T @ H_prev`` with dG (T*B, 4H), instead of T small ones.

Gate layout is gate-major: the 4H columns are [a (cell input), i, f, o], each H wide.
"""
import chainer
from chainer import backend


def matmul(a, b):
    """``a @ b``. Every matrix product here goes through this name, so that
    ``dlhack.bench.flops.GemmMeter`` can count and time them."""
    return a @ b


def _sigmoid(xp, x):
    return 0.5 * xp.tanh(0.5 * x) + 0.5  # = 1 / (1 + exp(-x)), without overflow


class LSTMSequence(chainer.Function):
    """Inputs xw (T, B, 4H), h0 (B, H), c0 (B, H), w_h (4H, H); outputs hs, cs (T, B, H)."""

    def forward(self, inputs):
        xw, h, c, w_h = inputs
        xp = backend.get_array_module(xw)
        T, B, G = xw.shape
        H = G // 4
        self.act = xp.empty_like(xw)  # activated gates, kept for backward
        hs = xp.empty((T, B, H), xw.dtype)
        cs = xp.empty((T, B, H), xw.dtype)
        for t in range(T):
            g = xw[t] + matmul(h, w_h.T)
            act = self.act[t]
            act[:, :H] = xp.tanh(g[:, :H])
            act[:, H:] = _sigmoid(xp, g[:, H:])
            a, i, f, o = act[:, :H], act[:, H:2 * H], act[:, 2 * H:3 * H], act[:, 3 * H:]
            c = a * i + f * c
            h = o * xp.tanh(c)
            hs[t], cs[t] = h, c
        self.retain_inputs((1, 2, 3))
        self.hs, self.cs = hs, cs
        return hs, cs

    def backward(self, inputs, grads):
        _, h0, c0, w_h = inputs
        g_hs, g_cs = grads
        xp = backend.get_array_module(w_h)
        T, B, H = self.hs.shape
        d_xw = xp.empty_like(self.act)
        dh = xp.zeros((B, H), w_h.dtype)  # gradient flowing back from step t+1
        dc = xp.zeros((B, H), w_h.dtype)
        for t in reversed(range(T)):
            if g_hs is not None:
                dh = dh + g_hs[t]
            if g_cs is not None:
                dc = dc + g_cs[t]
            act = self.act[t]
            a, i, f, o = act[:, :H], act[:, H:2 * H], act[:, 2 * H:3 * H], act[:, 3 * H:]
            tanh_c = xp.tanh(self.cs[t])
            dc = dc + dh * o * (1 - tanh_c * tanh_c)
            c_prev = self.cs[t - 1] if t > 0 else c0
            dg = d_xw[t]
            dg[:, :H] = dc * i * (1 - a * a)
            dg[:, H:2 * H] = dc * a * i * (1 - i)
            dg[:, 2 * H:3 * H] = dc * c_prev * f * (1 - f)
            dg[:, 3 * H:] = dh * tanh_c * o * (1 - o)
            dc = dc * f
            dh = matmul(dg, w_h)
        h_prev = xp.concatenate([h0[None], self.hs[:-1]])  # (T, B, H): h_{t-1} for each t
        d_w_h = matmul(d_xw.reshape(T * B, 4 * H).T, h_prev.reshape(T * B, H))
        return d_xw, dh, dc, d_w_h


def lstm_sequence(xw, h0, c0, w_h):
    """Run one LSTM layer over a sequence.

    Args:
        xw: (T, B, 4H) input projections of every time step, bias included.
        h0, c0: (B, H) initial states.
        w_h: (4H, H) recurrent weights, gate-major [a, i, f, o].

    Returns:
        hs, cs: (T, B, H) hidden and cell states of every time step.
    """
    return LSTMSequence()(xw, h0, c0, w_h)
