"""A whole LSTM layer over a packed batch, as one Chainer function: the fused sibling of
``dlhack.model.lstm`` (read that one first: the same equations, one idea at a time).

    hs, h_last, c_last = lstm_layer(x, h0, c0, w_x, w_h, b, packing, mask=None)

What it does differently, and why (``dlhack bench model`` measures each):

- the batch is packed (``dlhack.model.packing``): sentences sorted longest first, step ``t``
  computes only the ``batch_sizes[t]`` still going, so no product or gate ever runs on padding,
  and each sentence's final state is simply where its row stopped;
- the input projection ``x @ W_x.T + b`` of every token, the recurrence and the dropout of the
  layer's input (``mask``) are one function node per layer, not a linear, a reshape, the
  recurrence and indexings;
- the gates are in NStepLSTM's order [i, f, a (cell input), o], the order of its parameters
  ``w0..w3`` (input) and ``w4..w7`` (recurrent): packed by ``PackedAdam`` they lie in that order
  in one buffer, so ``dlhack.model.fused`` hands each layer views of them, never copies;
- the elementwise work of a step (bias, gates, cell, output; backward: the local derivatives
  and the cell's gradient) is one pass of ``elementwise.c`` where ``dlhack.model.ckernels``
  builds it (float32 on a CPU), with the gradients of the pre-activations written over the
  gates; else numpy (``DLHACK_KERNELS=numpy`` forces it), every step writing into arrays
  allocated once per call (``out=``), and backward computing each gate's local derivative for
  every token at once before its time loop. Either loop holds one product per step.

Memory kept for backward: the activated gates (N, 4H) and the input as given (the layer below
keeps it anyway: the dropout is applied again; ``input_again`` makes it again instead, for an
embedding's rows), N real tokens. Backward recomputes the cells from the gates (one
elementwise pass over the steps) and the outputs over them (o tanh(c), in the compiled
kernel), in one (N, H) buffer that then takes the input's gradient. The numpy backward needs
one more (N, 4H) and two (N, H). The products are those of ``lstm`` without the padding rows:
``dlhack.bench.flops`` counts their useful operations.
"""
import chainer
import numpy as np
from chainer import backend

from dlhack.model.ckernels import address, kernels_for
from dlhack.model.dropout_mask import dropped


def matmul(a, b, out=None):
    """``a @ b`` (into ``out``). Every matrix product here goes through this name, so that
    ``dlhack.bench.flops.GemmMeter`` can count and time them."""
    return backend.get_array_module(a).matmul(a, b, out=out)


class LSTMLayer(chainer.FunctionNode):
    """Inputs x (N, n_in) packed, h0, c0 (B, H) in ``packing.order``, w_x (4H, n_in),
    w_h (4H, H), b (4H,) or (8H,) (two biases, summed); outputs hs (N, H) and each sentence's
    final h and c (B, H)."""

    def __init__(self, packing, mask=None, input_again=None):
        self.packing, self.mask = packing, mask  # mask: (N, n_in) or None
        self.input_again = input_again  # None, or a function giving x's array again

    def forward(self, inputs):
        x, h0, c0, w_x, w_h, b = inputs
        self.two_biases = len(b) == 2 * len(w_h)  # NStepLSTM's b0..b3 and b4..b7, summed here
        if self.two_biases:
            b = b[:len(w_h)] + b[len(w_h):]
        # x as given: the layer below keeps it anyway (masked again in backward); not kept
        # where it can be made again (an embedding's rows: the table is kept anyway)
        self.x = x if self.input_again is None else None
        if self.mask is not None:
            x = dropped(x, self.mask)
        self.lib = kernels_for(x)
        steps = self._steps_numpy if self.lib is None else self._steps_compiled
        self.act, hs, cs = steps(x, h0, c0, w_x, w_h, b)
        self.cs = None  # cells and outputs are recomputed in backward from the gates
        self.retain_inputs((1, 2, 3, 4))
        last = backend.get_array_module(x).asarray(self.packing.final_rows())
        return hs, hs[last], cs[last]

    def _steps_numpy(self, x, h0, c0, w_x, w_h, b):
        """The time loop in numpy: ``(act, hs, cs)``, the activated gates (N, 4H) [i, f, a, o],
        outputs and cells (N, H)."""
        xp = backend.get_array_module(x)
        H, off = w_h.shape[1], self.packing.offsets
        # sigmoid(z) = 0.5 tanh(z / 2) + 0.5 (never overflows). With the rows of the sigmoid
        # gates (i, f, o) halved in these copies of the weights, one tanh over whole
        # contiguous rows activates all four gates; a scale and a shift finish i, f, o.
        scale = xp.full(4 * H, 0.5, x.dtype)
        scale[2 * H:3 * H] = 1  # the cell input a: a plain tanh
        shift = xp.where(scale == 1, 0, 0.5).astype(x.dtype)
        act = matmul(x, (w_x * scale[:, None]).T)  # (N, 4H): pre-activations, then gates
        act += b * scale
        w_h_t = (w_h * scale[:, None]).T
        hs, cs = xp.empty((len(x), H), x.dtype), xp.empty((len(x), H), x.dtype)
        rec = xp.empty((len(h0), 4 * H), x.dtype)
        fc, tc = xp.empty((len(h0), H), x.dtype), xp.empty((len(h0), H), x.dtype)
        h, c = h0, c0
        for t, n in enumerate(self.packing.batch_sizes):
            rows = slice(off[t], off[t] + n)
            g = act[rows]
            g += matmul(h[:n], w_h_t, out=rec[:n])
            xp.tanh(g, out=g)
            g *= scale
            g += shift  # g = [i, f, a, o]
            xp.multiply(g[:, :H], g[:, 2 * H:3 * H], out=cs[rows])  # i * a
            cs[rows] += xp.multiply(g[:, H:2 * H], c[:n], out=fc[:n])  # + f * c_prev
            xp.multiply(g[:, 3 * H:], xp.tanh(cs[rows], out=tc[:n]), out=hs[rows])
            h, c = hs[rows], cs[rows]  # a sentence keeps its position: rows [0, n) go on
        return act, hs, cs

    def _steps_compiled(self, x, h0, c0, w_x, w_h, b):
        """The time loop with ``elementwise.c``: each step one product and one pass (the bias,
        the gates and the cell); returns what ``_steps_numpy`` does."""
        lib, H, off = self.lib, w_h.shape[1], self.packing.offsets.tolist()  # ctypes: ints
        act = matmul(x, w_x.T)  # (N, 4H): the input projections; the bias is added per step
        hs, cs = np.empty((len(x), H), x.dtype), np.empty((len(x), H), x.dtype)
        rec = np.empty((len(h0), 4 * H), x.dtype)
        b, c0 = np.ascontiguousarray(b), np.ascontiguousarray(c0)
        w_h_t, h, row = w_h.T, h0, H * x.itemsize  # row: bytes per row of hs and cs
        a_act, a_rec, a_b, a_cs, a_hs = (address(v) for v in (act, rec, b, cs, hs))
        c_prev = address(c0)
        for t, n in enumerate(self.packing.batch_sizes.tolist()):
            matmul(h[:n], w_h_t, out=rec[:n])
            lib.lstm_forward_step(n, H, a_act + off[t] * 4 * row, a_rec, a_b, c_prev, H,
                                  a_cs + off[t] * row, a_hs + off[t] * row)
            h, c_prev = hs[off[t]:off[t] + n], a_cs + off[t] * row
        return act, hs, cs

    def _cells(self, c0):
        """(N, H): the cells again, from the kept gates: ``c_t = i a + f c_{t-1}``, all the
        products ``i a`` at once, then one sequential pass over the steps (one call of
        ``elementwise.c`` where it is built)."""
        xp = backend.get_array_module(self.act)
        act, H, off = self.act, c0.shape[1], self.packing.offsets
        if self.lib is not None:
            cs, c0 = np.empty((len(act), H), act.dtype), np.ascontiguousarray(c0)
            offsets = np.ascontiguousarray(off, dtype=np.int64)
            self.lib.lstm_cells(len(off) - 1, address(offsets), H, address(act), address(c0),
                                address(cs))
            return cs
        cs = xp.multiply(act[:, :H], act[:, 2 * H:3 * H])
        tmp = xp.empty_like(c0)
        c = c0
        for t, n in enumerate(self.packing.batch_sizes):
            rows = slice(off[t], off[t] + n)
            cs[rows] += xp.multiply(act[rows, H:2 * H], c[:n], out=tmp[:n])
            c = cs[rows]
        return cs

    def _input(self, out):
        """The (dropped-out) input the forward multiplied, (N, n_in): masked again (into
        ``out`` where it fits), not kept; made again by ``input_again`` where given."""
        x = self.x if self.input_again is None else self.input_again()
        if self.mask is None:
            return x
        fits = out.shape == x.shape and out.dtype == x.dtype
        return dropped(x, self.mask, out=out if fits else None)

    def _previous(self, states, initial, out=None):
        """(N, H): for every packed row, the state its step read (``initial`` at step 0);
        ``out`` may be ``states`` (shifted in place: the last steps first)."""
        off, sizes = self.packing.offsets, self.packing.batch_sizes
        prev = backend.get_array_module(states).empty_like(states) if out is None else out
        for t in reversed(range(1, len(sizes))):  # step t's sentences: step t-1's first rows
            prev[off[t]:off[t + 1]] = states[off[t - 1]:off[t - 1] + sizes[t]]
        prev[:sizes[0]] = initial
        return prev

    def _local_derivatives(self, c0):
        """``(k_c, k, hs)`` for every token: dc += dh k_c; d(pre-activations) = [dc dc dc dh] k;
        hs = o tanh(c), the outputs (recomputed, not kept).

        k = s (1 - s) for every gate over whole rows, the cell input's block set to 1 - a^2,
        each block then times what its gate multiplied: [a, c_prev, i, tanh c], in place (a
        buffer of those four costs (N, 4H) more at the step's memory peak, and no time).
        """
        xp = backend.get_array_module(self.act)
        act, tc, H = self.act, xp.tanh(self.cs), self.cs.shape[1]
        i, a, o = act[:, :H], act[:, 2 * H:3 * H], act[:, 3 * H:]
        k = xp.subtract(1, act)
        k *= act
        k[:, :H] *= a
        k[:, H:2 * H] *= self._previous(self.cs, c0)
        k_a = k[:, 2 * H:3 * H]
        xp.multiply(a, a, out=k_a)
        xp.subtract(1, k_a, out=k_a)
        k_a *= i
        k[:, 3 * H:] *= tc
        k_c = xp.multiply(tc, tc)  # o (1 - tanh(c)^2)
        xp.subtract(1, k_c, out=k_c)
        k_c *= o
        return k_c, k, xp.multiply(o, tc)

    def backward(self, indexes, grad_outputs):
        if self.act is None:
            raise RuntimeError("an LSTM layer's backward runs once per forward: it frees its "
                               "arrays (run the forward again)")
        h0, c0, w_x, w_h = (v.array for v in self.get_retained_inputs())
        g_hs, g_h, g_c = (None if g is None else g.array for g in grad_outputs)
        self.cs = self._cells(c0)
        backprop = self._backprop_numpy if self.lib is None else self._backprop_compiled
        d_act, dh, dc, db, hs = backprop(c0, g_hs, g_h, g_c, w_h)
        # One (N, H) buffer serves in turn as the cells, the outputs, the previous outputs,
        # the masked input and the input's gradient: the gradients in that order.
        buf = self._previous(hs, h0, out=hs)
        g = {1: dh, 2: dc, 5: backend.get_array_module(db).concatenate([db, db])
             if self.two_biases else db}
        if 4 in indexes:
            g[4] = matmul(d_act.T, buf)  # the previous outputs
        if 3 in indexes:
            g[3] = matmul(d_act.T, self._input(out=buf))
        # Backward runs once per forward (as in training): what only it needed goes now, so
        # the step's memory falls layer by layer instead of peaking at its end.
        self.cs = self.x = None
        if 0 in indexes:
            fits = buf.shape == (len(d_act), w_x.shape[1])
            g[0] = matmul(d_act, w_x, out=buf if fits else None)
            if self.mask is not None:
                dropped(g[0], self.mask, out=g[0])
        self.act = None
        return tuple(chainer.Variable(g[i]) for i in indexes)

    def _backprop_numpy(self, c0, g_hs, g_h, g_c, w_h):
        """The time loop backward in numpy: ``(d_act, dh, dc, db, hs)``, the gradients of the
        pre-activations (N, 4H, in ``act``'s memory), of the initial states (B, H) and of the
        bias, and the outputs (N, H)."""
        xp = backend.get_array_module(w_h)
        H, off = c0.shape[1], self.packing.offsets
        k_c, d_act, hs = self._local_derivatives(c0)  # d_act is finished in place below
        # A sentence's row is idle after its last step, so its final-state gradient can sit in
        # dh, dc from the start: it is first used at that last step.
        dh = xp.zeros_like(c0) if g_h is None else g_h.copy()
        dc = xp.zeros_like(c0) if g_c is None else g_c.copy()
        tmp = xp.empty_like(dh)
        f = self.act[:, H:2 * H]
        for t in reversed(range(len(self.packing.batch_sizes))):
            n = self.packing.batch_sizes[t]
            rows = slice(off[t], off[t] + n)
            if g_hs is not None:
                dh[:n] += g_hs[rows]
            dc[:n] += xp.multiply(dh[:n], k_c[rows], out=tmp[:n])
            d = d_act[rows]
            gates3 = d[:, :3 * H].reshape(n, 3, H)  # a view: i, f, a scale with dc
            gates3 *= dc[:n, None, :]
            d[:, 3 * H:] *= dh[:n]
            dc[:n] *= f[rows]
            matmul(d, w_h, out=dh[:n])
        return d_act, dh, dc, d_act.sum(axis=0), hs

    def _backprop_compiled(self, c0, g_hs, g_h, g_c, w_h):
        """``_backprop_numpy`` with ``elementwise.c``: each step one pass (the local derivatives
        and the cell's gradient, into ``act``, summed into the bias's gradient; the outputs over
        the cells) and one product."""
        H, off, at = c0.shape[1], self.packing.offsets.tolist(), address
        dh = np.zeros(c0.shape, c0.dtype) if g_h is None else np.array(g_h, order="C")
        dc = np.zeros(c0.shape, c0.dtype) if g_c is None else np.array(g_c, order="C")
        c0 = np.ascontiguousarray(c0)
        g_hs = None if g_hs is None else np.ascontiguousarray(g_hs)
        row = H * self.cs.itemsize  # bytes per row of cs, hs and g_hs; act's are 4 times that
        db = np.zeros(self.act.shape[1], self.act.dtype)  # summed over the steps
        a_act, a_cs, a_c0, a_dh, a_dc, a_db = (at(v) for v in (self.act, self.cs, c0, dh, dc, db))
        a_g = None if g_hs is None else at(g_hs)
        for t in reversed(range(len(off) - 1)):
            n = off[t + 1] - off[t]
            c_prev = a_c0 if t == 0 else a_cs + off[t - 1] * row
            self.lib.lstm_backward_step(n, H, a_act + off[t] * 4 * row, a_cs + off[t] * row,
                                        c_prev, H, a_dh, a_g and a_g + off[t] * row, a_dc,
                                        a_db)
            matmul(self.act[off[t]:off[t] + n], w_h, out=dh[:n])
        return self.act, dh, dc, db, self.cs


def lstm_layer(x, h0, c0, w_x, w_h, b, packing, mask=None, input_again=None):
    """Run one LSTM layer, input projection included, over a packed batch.

    Args:
        x: (N, n_in) inputs, packed by ``packing`` (a ``dlhack.model.packing.Packing``).
        h0, c0: (B, H) initial states, in ``packing.order`` (arrays or variables).
        w_x, w_h: (4H, n_in) and (4H, H) weights, gate-major [i, f, a, o]; b: (4H,) bias, or
            (8H,): two such, summed (NStepLSTM's input and recurrent biases, one node less).
        mask: (N, n_in) dropout mask (already scaled, or a ``DropoutMask``), or None.
        input_again: None, or a function returning x's array again (its backward calls it
            rather than keep x: for rows gathered from a table that backward still has).

    Returns:
        hs (N, H) packed outputs, and h, c (B, H) at each sentence's last token, in
        ``packing.order``.
    """
    return LSTMLayer(packing, mask, input_again).apply((x, h0, c0, w_x, w_h, b))
