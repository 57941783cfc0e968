"""The translator with its training step fused: the fast sibling of ``Seq2seq`` (read that
one first; lessons show it).

    model = FusedSeq2seq(n_src_vocab, n_tgt_vocab, n_units=256, n_layers=3)
    optimizer = PackedAdam(); optimizer.setup(model)       # dlhack.model.packed_adam

The same parameters, loss and gradients as ``Seq2seq`` (``tests/model/test_fused.py`` checks
them on the same weights); only the training step is computed differently:

- batches are packed (``dlhack.model.packing``): sentences sorted longest first, time-major,
  no padding, so no product, gate or softmax is ever computed on a padding position;
- each LSTM layer is one function with its own backward (``dlhack.model.fused_lstm``): input
  projection, recurrence, dropout of its input and the final states, one node per layer; its
  gate weights are views of ``PackedAdam``'s buffer (``stack_groups``, one node per layer),
  not copies made each step;
- the output layer and the softmax cross-entropy over the vocabulary are one function
  (``dlhack.model.fused_output``): a block of tokens at a time, the logits turn into the loss
  and its gradients in forward (the loss is a scalar), so no (tokens, vocabulary) array is kept
  for backward; the dropout of the features is a mask applied inside;
- embeddings are a row gather whose backward adds rows with ``add.at``, or one pass of
  ``dlhack.model.ckernels``' C where it builds (Chainer's ``EmbedIDGrad`` loops in Python over
  every token on a CPU). With attention, the packed outputs are gathered into padded (B, T, H)
  arrays for it, and its features back.

Dropout masks are booleans (``dlhack.model.dropout_mask``: a quarter of float32's memory),
each a hash of the units' positions and a key drawn from a generator seeded from numpy's global
one when the model is made (so ``np.random.seed`` before the model still fixes a run), not
Chainer's float64 draws: with dropout the two siblings see different masks, without it the
same numbers.
Translation (``translate``) is the readable model's, unchanged. Making one tells glibc to keep
freed memory for reuse (``dlhack.model.heap``): the process's own allocator, for good.
"""
import chainer
import chainer.functions as F
import numpy as np
from chainer import backend

from dlhack.model.ckernels import address, kernels_for
from dlhack.model.dropout_mask import DropoutMask, draw
from dlhack.model.fused_lstm import lstm_layer
from dlhack.model.fused_output import OutputLoss
from dlhack.model.heap import keep_freed_memory
from dlhack.model.packing import Packing
from dlhack.model.seq2seq import BOS, EOS, Seq2seq


def rows_of(x, index):
    """The array ``x[index]``, zeros where ``index == -1``."""
    xp = backend.get_array_module(x)
    out = x[xp.where(index >= 0, index, 0)]
    out[index < 0] = 0
    return out


class GatherRows(chainer.FunctionNode):
    """``out[j] = x[index[j]]``, zeros where ``index[j] == -1``; backward adds rows back."""

    def __init__(self, index):
        self.index = index  # (M,) ints on x's device

    def forward(self, inputs):
        x, = inputs
        self.n_rows, self.valid = len(x), self.index >= 0
        return rows_of(x, self.index),

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0].array
        xp = backend.get_array_module(gy)
        gx = xp.zeros((self.n_rows,) + gy.shape[1:], gy.dtype)
        index, rows = self.index[self.valid], gy[self.valid]
        lib = kernels_for(gy)
        if lib is not None:  # numpy's add.at, in one pass (dlhack.model.ckernels)
            index, rows = index.astype(np.int64), np.ascontiguousarray(rows)
            lib.scatter_add_rows(len(index), rows[0].size if len(rows) else 0, address(index),
                                 address(rows), address(gx))
        elif xp is np:
            np.add.at(gx, index, rows)
        else:
            import cupyx
            cupyx.scatter_add(gx, index, rows)
        return chainer.Variable(gx),


def _adjacent(arrays):
    """The arrays as one (sum of rows, ...) view where they lie one after another in one
    C-contiguous numpy buffer (as ``PackedAdam`` packs a layer's gates), else None."""
    first = arrays[0]
    root = first
    while isinstance(root.base, np.ndarray):
        root = root.base
    if not isinstance(first, np.ndarray) or not root.flags.c_contiguous:
        return None
    start = address = first.__array_interface__["data"][0]
    for a in arrays:
        if (not isinstance(a, np.ndarray) or a.dtype != first.dtype or not a.flags.c_contiguous
                or a.shape[1:] != first.shape[1:] or a.__array_interface__["data"][0] != address):
            return None
        address += a.nbytes
    offset = (start - root.__array_interface__["data"][0]) // first.itemsize
    flat = root.reshape(-1)[offset:offset + (address - start) // first.itemsize]
    return flat.reshape((-1,) + first.shape[1:])


class StackRows(chainer.FunctionNode):
    """Each group of ``sizes`` consecutive inputs concatenated along rows, one output per
    group: a view where a group's arrays are adjacent in memory. Backward hands each input its
    rows of its group's gradient (views)."""

    def __init__(self, sizes):
        self.sizes = sizes

    def forward(self, inputs):
        self.rows = []  # for each input: (its output, its first row there, its end)
        outs, first = [], 0
        for size in self.sizes:
            group = inputs[first:first + size]
            bounds = np.cumsum([0] + [len(a) for a in group])
            self.rows += [(len(outs), bounds[j], bounds[j + 1]) for j in range(size)]
            out = _adjacent(group)
            if out is None:
                out = backend.get_array_module(group[0]).concatenate(group, axis=0)
            outs.append(out)
            first += size
        return tuple(outs)

    def backward(self, indexes, grad_outputs):
        grads = []  # views of the arrays: slicing the variables would add a node each
        for i in indexes:
            out, begin, end = self.rows[i]
            gy = grad_outputs[out]
            grads.append(None if gy is None else chainer.Variable(gy.array[begin:end]))
        return tuple(grads)


def stack_rows(arrays):
    """The arrays (variables) stacked along rows; a view of ``PackedAdam``'s buffer when they
    are its consecutive parameters (as a layer's gates are), else a copy."""
    return stack_groups(arrays)[0]


def stack_groups(*groups):
    """``stack_rows`` of each group, as one function node: a variable per group."""
    return StackRows([len(g) for g in groups]).apply(tuple(a for g in groups for a in g))


def gather_rows(x, index):
    """Rows ``x[index]`` (zeros for -1) as a differentiable function."""
    return GatherRows(index).apply((x,))[0]


class FusedSeq2seq(Seq2seq):
    """``Seq2seq`` (same arguments, parameters and loss) with the fused training step.

    ``impl`` must stay ``"fast"``: translation uses that formulation, training the fused one.
    """

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        if self.impl != "fast":
            raise ValueError("FusedSeq2seq fuses the 'fast' formulation only")
        self._rng = np.random.default_rng(np.random.randint(2 ** 31))
        keep_freed_memory()  # a step's arrays reuse the last step's memory (dlhack.model.heap)

    def _mask(self, shape):
        """A dropout mask (``DropoutMask``: booleans, kept units scaled by 1 / (1 - ratio)
        where applied), or None."""
        if not chainer.config.train or self.dropout == 0:
            return None
        xp = self.xp
        if xp is np:  # a hash of each position and a key drawn here (dropout_mask.draw)
            return draw(shape, self.dropout, int(self._rng.integers(2 ** 32)))
        keep = xp.random.rand(*shape, dtype=np.float32) >= self.dropout
        return DropoutMask(keep, self.dropout)

    def _layers(self, lstm, hx, cx, embed, ids, packing):
        """Multi-layer LSTM over the packed tokens ``ids`` (N,) embedded by ``embed``: final
        states (lists of n_layers (B, H) variables, in ``packing.order``: a stacked array's
        rows would each be a ``get_item``, whose backward is numpy's slow ``add.at``) and the
        top layer's packed outputs (N, H). ``hx``, ``cx``: such lists, or None (zeros). The
        first layer gathers its input rows again in backward rather than keep them."""
        xs = gather_rows(embed.W, ids)
        zeros = self.xp.zeros((len(packing.order), self.n_units), xs.dtype)
        hy, cy = [], []
        for layer in range(self.n_layers):
            ws, bs = lstm.ws[layer], lstm.bs[layer]
            # NStepLSTM's order [i, f, a, o], the fused layer's: w0..w3 input, w4..w7 recurrent
            # b (8H,): the input and recurrent biases, summed in the layer; one node for all
            w_x, w_h, b = stack_groups(ws[:4], ws[4:], bs)
            mask = self._mask(xs.shape) if layer > 0 else None
            h0 = zeros if hx is None else hx[layer]
            c0 = zeros if cx is None else cx[layer]
            again = (lambda: rows_of(embed.W.array, ids)) if layer == 0 else None
            xs, h, c = lstm_layer(xs, h0, c0, w_x, w_h, b, packing, mask, again)
            hy.append(h)
            cy.append(c)
        return hy, cy, xs

    def _padded(self, packed, packing):
        """Packed rows (N, H) -> (B, T, H) in sentence order, zeros past each end."""
        index = packing.index()  # (B, T)
        rows = gather_rows(packed, self.xp.asarray(index.ravel()))
        return F.reshape(rows, index.shape + (packed.shape[1],)), index >= 0

    def forward(self, xs, ys, normalizer=None):
        """Loss: mean over sentences of the summed token cross-entropy (as ``Seq2seq``)."""
        xp, host = self.xp, chainer.backend.CpuDevice().send
        xs, ys = [host(x) for x in xs], [host(y) for y in ys]
        src, tgt = Packing([len(x) for x in xs]), Packing([len(y) + 1 for y in ys])
        hy, cy, enc = self._layers(self.encoder, None, None, self.embed_x,
                                   xp.asarray(src.pack(xs)), src)
        enc = enc if self.attention else None  # else its memory goes with the forward's end
        encoder_row = np.empty_like(src.order)
        encoder_row[src.order] = np.arange(len(xs))
        to_decoder = xp.asarray(encoder_row[tgt.order])  # the decoder sorts by target length
        hy = [F.permutate(h, to_decoder) for h in hy]
        cy = [F.permutate(c, to_decoder) for c in cy]
        ys_in = [np.concatenate([[BOS], y]).astype(np.int32) for y in ys]
        ys_out = [np.concatenate([y, [EOS]]).astype(np.int32) for y in ys]
        _, _, features = self._layers(self.decoder, hy, cy, self.embed_y,
                                      xp.asarray(tgt.pack(ys_in)), tgt)
        if self.attention:
            enc_padded, src_mask = self._padded(enc, src)
            dec_padded, _ = self._padded(features, tgt)
            attended = self.output_features(dec_padded, enc_padded, xp.asarray(src_mask))
            index = tgt.index()  # packed row of (b, t); gather each packed row's position back
            position = np.empty(tgt.n, dtype=np.int64)
            position[index[index >= 0]] = np.flatnonzero(index.ravel() >= 0)
            features = gather_rows(F.reshape(attended, (-1, self.n_units)), xp.asarray(position))
        node = OutputLoss(xp.asarray(tgt.pack(ys_out)), normalizer or len(xs),
                          self._mask(features.shape), overwrite=True)  # read by nothing else
        loss, = node.apply((features, self.W_o.W, self.W_o.b))
        perp = np.exp(node.token_loss_sum / tgt.n)
        chainer.report({"loss": loss, "perp": perp}, self)
        return loss
