"""The translator: a multi-layer LSTM encoder-decoder with optional global attention.

Lesson 1 (``lessons/01_translator.ipynb``) introduces it. The model reads a source sentence
with an encoder LSTM, starts a decoder LSTM from the encoder's final state and, at every target
position, looks back at all encoder outputs (global "dot" attention, Luong et al. 2015) before
predicting the next token.

Two formulations of the same LSTM share one set of parameters (those of ``L.NStepLSTM``):

- ``impl="fast"`` (the default): for each layer, the input projection of *all* time steps is
  one matrix product ``(T*B, n_in) @ (n_in, 4H)`` done before the time loop; the loop itself,
  with only the recurrent product ``(B, H) @ (H, 4H)`` left in it, is one Chainer function
  (``dlhack.model.lstm``) instead of a dozen per time step. A batch is one dense padded ``(T, B)``
  array; each sentence's final state is picked out at its own length.
- ``impl="nstep"``: Chainer's own ``NStepLSTM`` on lists of sequences, kept as the reference.
  On CPU it re-stacks the eight weight matrices at every time step (and keeps each copy for
  backward): slow, and about 13 GB per process at 1024 units.

Both compute the same loss and gradients on the same weights (``tests/model/test_seq2seq.py``).

The loss is the mean over sentences of the summed token cross-entropy. With that choice the
average of N ranks' losses on batches of b sentences equals the loss of one process on the
N*b sentences, so data-parallel training reproduces large-batch training exactly.
"""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np

from dlhack.corpus import Vocabulary
from dlhack.model.lstm import lstm_sequence

UNK, BOS, EOS = Vocabulary.UNK, Vocabulary.BOS, Vocabulary.EOS
PAD = -1  # padding id: EmbedID(ignore_label=-1) embeds it as zeros; the loss ignores it

# NStepLSTM keeps W0..W3 (input) and W4..W7 (recurrent) for the gates i, f, a (cell), o.
# lstm_sequence wants one (4H, n_in) matrix, gate-major in the order a, i, f, o.
_X_GATES, _H_GATES = (2, 0, 1, 3), (6, 4, 5, 7)


def _stack_gates(params, order):
    """Concatenate per-gate weights (H, n) or biases (H,) into one gate-major (4H, ...) array."""
    return F.concat([params[i] for i in order], axis=0)


def pad(seqs, xp, value=PAD):
    """Pad a list of 1-D int arrays to one ``(B, T)`` int32 array."""
    out = np.full((len(seqs), max(len(s) for s in seqs)), value, dtype=np.int32)
    for i, s in enumerate(seqs):
        out[i, :len(s)] = chainer.backend.CpuDevice().send(s)
    return xp.asarray(out)


class Seq2seq(chainer.Chain):
    """LSTM encoder-decoder with optional global attention.

    Args:
        n_src_vocab: source vocabulary size.
        n_tgt_vocab: target vocabulary size.
        n_units: embedding and hidden size.
        n_layers: stacked LSTM layers in encoder and decoder.
        dropout: dropout ratio on the inputs of layers above the first (as NStepLSTM does)
            and on the decoder's output features.
        attention: use global dot attention over the encoder outputs.
        impl: ``"fast"`` (hoisted input projection) or ``"nstep"`` (Chainer's NStepLSTM).
    """

    def __init__(self, n_src_vocab, n_tgt_vocab, n_units=128, n_layers=2, dropout=0.1,
                 attention=True, impl="fast"):
        super().__init__()
        if impl not in ("fast", "nstep"):
            raise ValueError(f"impl must be 'fast' or 'nstep', not {impl!r}")
        self.n_units, self.n_layers, self.dropout = n_units, n_layers, dropout
        self.attention, self.impl = attention, impl
        with self.init_scope():
            self.embed_x = L.EmbedID(n_src_vocab, n_units, ignore_label=PAD)
            self.embed_y = L.EmbedID(n_tgt_vocab, n_units, ignore_label=PAD)
            self.encoder = L.NStepLSTM(n_layers, n_units, n_units, dropout)
            self.decoder = L.NStepLSTM(n_layers, n_units, n_units, dropout)
            if attention:
                self.W_c = L.Linear(2 * n_units, n_units)  # [decoder; context] -> features
            self.W_o = L.Linear(n_units, n_tgt_vocab)

    # --- the LSTM, two ways -------------------------------------------------------------

    def _run_fast(self, lstm, hx, cx, xs, lengths):
        """Fast multi-layer LSTM. xs: (T, B, n_units) embedded inputs, padded at the end.

        Returns hy, cy (n_layers, B, H), the states at each sentence's last real token, and
        the top layer's outputs (B, T, H). Padding comes after the real tokens, so the loop
        runs straight through it: outputs there are never used (attention and loss mask them)
        and the final states are picked out at ``lengths - 1`` afterwards.
        """
        T, B, _ = xs.shape
        xp = self.xp
        last = (xp.asarray(lengths) - 1, xp.arange(B))  # index of each final state in (T, B)
        hy, cy = [], []
        for layer in range(self.n_layers):
            ws, bs = lstm.ws[layer], lstm.bs[layer]
            w_x, w_h = _stack_gates(ws, _X_GATES), _stack_gates(ws, _H_GATES)
            b = _stack_gates(bs, _X_GATES) + _stack_gates(bs, _H_GATES)
            if layer > 0:
                xs = F.dropout(xs, self.dropout)
            # One product for every time step: (T*B, n_in) @ (n_in, 4H).
            xw = F.reshape(F.linear(F.reshape(xs, (T * B, -1)), w_x, b), (T, B, -1))
            h0 = xp.zeros((B, self.n_units), xw.dtype) if hx is None else hx[layer]
            c0 = xp.zeros((B, self.n_units), xw.dtype) if cx is None else cx[layer]
            xs, cs = lstm_sequence(xw, h0, c0, w_h)  # (T, B, H) each: only the recurrence
            hy.append(xs[last])
            cy.append(cs[last])
        return F.stack(hy), F.stack(cy), F.transpose(xs, (1, 0, 2))

    def _run_nstep(self, lstm, hx, cx, xs, lengths):
        """Reference: Chainer's NStepLSTM on the list of unpadded sequences."""
        seqs = [xs[:n, i] for i, n in enumerate(lengths)]
        hy, cy, ys = lstm(hx, cx, seqs)
        return hy, cy, F.pad_sequence(ys, padding=0)  # (B, T, H)

    def _run(self, lstm, hx, cx, xs, lengths):
        run = self._run_fast if self.impl == "fast" else self._run_nstep
        return run(lstm, hx, cx, xs, lengths)

    # --- encoder, decoder, loss -----------------------------------------------------------

    def encode(self, xs):
        """Encode a list of source id arrays.

        Returns:
            (hy, cy, enc, mask): final states (n_layers, B, H), encoder outputs (B, S, H) and a
            (B, S) boolean mask of real (non-padding) source positions.
        """
        lengths = [len(x) for x in xs]
        x = pad(xs, self.xp)  # (B, S)
        ex = self.embed_x(x.T)  # (S, B, H): time-major for the LSTM
        hy, cy, enc = self._run(self.encoder, None, None, ex, lengths)
        return hy, cy, enc, x != PAD

    def attention_weights(self, dec, enc, mask):
        """How much each decoder position (B, T, H) attends to each source position: (B, T, S).

        Dot-product scores, source padding hidden by ``mask`` (B, S), softmax over the source.
        """
        scores = F.matmul(dec, enc, transb=True)  # (B, T, S)
        hide = self.xp.broadcast_to(mask[:, None, :], scores.shape)
        scores = F.where(hide, scores, self.xp.full(scores.shape, -1e4, scores.dtype))
        return F.softmax(scores, axis=2)

    def output_features(self, dec, enc, mask):
        """Decoder outputs (B, T, H) -> features (B, T, H) fed to the output layer.

        With attention, each position attends over the encoder outputs enc (B, S, H);
        mask (B, S) hides source padding.
        """
        if not self.attention:
            return dec
        context = F.matmul(self.attention_weights(dec, enc, mask), enc)  # (B, T, H)
        B, T, H = dec.shape
        both = F.reshape(F.concat((dec, context), axis=2), (B * T, 2 * H))
        return F.reshape(F.tanh(self.W_c(both)), (B, T, H))

    def logits(self, features):
        """Features (B, T, H) -> logits (B*T, n_tgt_vocab)."""
        B, T, H = features.shape
        return self.W_o(F.dropout(F.reshape(features, (B * T, H)), self.dropout))

    def cross_entropy(self, logits, t):
        """Each position's loss (B*T,), 0 where the target ``t`` (B*T,) is PAD.

        Softmax cross-entropy over the whole vocabulary. ``dlhack.parallel.tensor_parallel``
        replaces it (and ``logits``, ``next_ids``): there each rank holds a slice of it.
        """
        return F.softmax_cross_entropy(logits, t, reduce="no", ignore_label=PAD)

    def next_ids(self, features):
        """Greedy choice: features (B, 1, H) -> the id of the highest logit (B,) int32."""
        return self.xp.argmax(self.logits(features).array, axis=1).astype(np.int32)

    def forward(self, xs, ys, normalizer=None):
        """Loss: mean over sentences of the summed token cross-entropy.

        Args:
            xs: list of source id arrays (no BOS/EOS).
            ys: list of target id arrays (no BOS/EOS); the decoder reads ``<s> y`` and
                predicts ``y <eos>``.
            normalizer: divide the summed loss by this instead of ``len(xs)``: ranks that
                share a global batch by tokens (``BalancedIterator``) each divide by its
                sentence count over the number of ranks, so their mean is its loss.
        """
        xp = self.xp
        hy, cy, enc, mask = self.encode(xs)
        bos, eos = xp.array([BOS], np.int32), xp.array([EOS], np.int32)
        ys_in = [xp.concatenate([bos, xp.asarray(y)]) for y in ys]
        ys_out = pad([xp.concatenate([xp.asarray(y), eos]) for y in ys], xp)  # (B, T)
        ey = self.embed_y(pad(ys_in, xp).T)  # (T, B, H)
        _, _, dec = self._run(self.decoder, hy, cy, ey, [len(y) for y in ys_in])
        logits = self.logits(self.output_features(dec, enc, mask))
        token_loss = self.cross_entropy(logits, ys_out.reshape(-1))
        loss = F.sum(token_loss) / (normalizer or len(xs))
        n_tokens = int((ys_out != PAD).sum())
        chainer.report({"loss": loss, "perp": F.exp(F.sum(token_loss) / n_tokens)}, self)
        return loss

    # --- translation ------------------------------------------------------------------------

    def decode_step(self, y, h, c):
        """One decoder step for every sentence: ids y (B,), states (n_layers, B, H) each.

        Returns the top layer's output (B, H) and the new states.
        """
        x = self.embed_y(y)
        hs, cs = [], []
        for layer in range(self.n_layers):
            ws, bs = self.decoder.ws[layer], self.decoder.bs[layer]
            b = _stack_gates(bs, _X_GATES) + _stack_gates(bs, _H_GATES)
            xw = F.linear(x, _stack_gates(ws, _X_GATES), b)[None]  # (1, B, 4H)
            h_seq, c_seq = lstm_sequence(xw, h[layer], c[layer], _stack_gates(ws, _H_GATES))
            x = h_seq[0]
            hs.append(x)
            cs.append(c_seq[0])
        return x, F.stack(hs), F.stack(cs)

    def translate(self, xs, max_length=50):
        """Greedy translation of a list of source id arrays -> list of id arrays (no EOS)."""
        xp = self.xp
        with chainer.no_backprop_mode(), chainer.using_config("train", False):
            h, c, enc, mask = self.encode(xs)
            y = xp.full(len(xs), BOS, np.int32)
            result = []
            for _ in range(max_length):
                out, h, c = self.decode_step(y, h, c)
                features = self.output_features(out[:, None, :], enc, mask)  # (B, 1, H)
                y = self.next_ids(features)
                result.append(chainer.backend.CpuDevice().send(y))
                if (np.stack(result) == EOS).any(axis=0).all():
                    break
        outs = []
        for ids in np.stack(result, axis=1):  # (B, steps)
            stop = np.flatnonzero(ids == EOS)
            outs.append(ids[:stop[0]] if len(stop) else ids)
        return outs


def convert(batch, device=None):
    """Converter for Chainer iterators: a list of (src, tgt) id-array pairs -> model kwargs
    (and the batch's ``normalizer``, when it has one: ``dlhack.corpus.batching.Batch``)."""
    to = (lambda a: a) if device is None else chainer.get_device(device).send
    kwargs = {"xs": [to(x) for x, _ in batch], "ys": [to(y) for _, y in batch]}
    if getattr(batch, "normalizer", None) is not None:
        kwargs["normalizer"] = batch.normalizer
    return kwargs
