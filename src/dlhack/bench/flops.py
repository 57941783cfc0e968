"""Floating-point operations of one translator training step: counted from the shapes, and
metered on a real step.

    count = step_flops(model, xs, ys)           # from the shapes: useful and padded
    with GemmMeter() as meter:                  # the matrix products a real step runs
        model(xs, ys).backward()
    assert meter.flops() == count.padded_total

A step's arithmetic is almost all matrix products (GEMMs, ``2 m k n`` operations each); they
are what the sgemm rate of ``dlhack.bench.roofline`` is compared with. Per token of a layer
with ``n_in`` inputs and ``H`` units, the forward pass does ``2 n_in 4H`` (input projection)
and ``2 H 4H`` (recurrence); backward does each product twice more (the gradients of the
input and of the weight), so a training step is 3x the forward products. The output layer does
``2 H V`` per target token, attention ``2 H`` per (target, source) pair twice (scores, context)
and ``2 (2H) H`` per target token for its feature layer. "Useful" counts real tokens only;
"padded" counts the dense ``(B, T)`` arrays the fast model computes on.

The elementwise work (gate nonlinearities and cell update, the softmax over the vocabulary) is
counted too, one operation per arithmetic step or transcendental, but kept apart: it runs at
memory speed, not at the sgemm rate. Counting costs nothing; the meter adds a few microseconds
per Chainer function.
"""
import dataclasses
import importlib
import time

import chainer
import numpy as np

PARTS = ("lstm input", "lstm recurrence", "attention", "output")
# Modules whose own matrix products go through a module-level ``matmul`` the meter replaces.
METERED_MODULES = ("dlhack.model.lstm", "dlhack.model.fused_lstm", "dlhack.model.fused_output")


@dataclasses.dataclass
class StepCount:
    """GEMM operations of one training step (forward and backward) by part, useful and padded,
    and the elementwise operations (padded) by part."""

    useful: dict
    padded: dict
    elementwise: dict

    @property
    def useful_total(self):
        return sum(self.useful.values())

    @property
    def padded_total(self):
        return sum(self.padded.values())


def _lstm_gemm(n_units, n_layers, tokens):
    """Forward GEMM operations of one multi-layer LSTM over ``tokens`` token positions."""
    H = n_units
    inputs = tokens * 2 * H * 4 * H * n_layers  # every layer's input is H wide (embeddings too)
    recurrence = tokens * 2 * H * 4 * H * n_layers
    return inputs, recurrence


def count_flops(n_units, n_layers, n_tgt_vocab, attention, src_lengths, tgt_lengths):
    """Operations of one training step on sentences of the given lengths.

    Args:
        n_units, n_layers, n_tgt_vocab, attention: the model's shape.
        src_lengths, tgt_lengths: per sentence, source and target tokens (no BOS/EOS).

    Returns:
        A ``StepCount``.
    """
    H, V = n_units, n_tgt_vocab
    src = np.asarray(src_lengths, np.int64)
    dec = np.asarray(tgt_lengths, np.int64) + 1  # the decoder reads <s> y, predicts y <eos>
    B = len(src)
    counts = {}
    for name, s_tok, d_tok, pairs in (
            ("useful", int(src.sum()), int(dec.sum()), int((src * dec).sum())),
            ("padded", B * int(src.max()), B * int(dec.max()), B * int(src.max() * dec.max()))):
        enc_in, enc_rec = _lstm_gemm(H, n_layers, s_tok)
        dec_in, dec_rec = _lstm_gemm(H, n_layers, d_tok)
        forward = {"lstm input": enc_in + dec_in, "lstm recurrence": enc_rec + dec_rec,
                   "attention": (2 * 2 * H * pairs + d_tok * 2 * 2 * H * H) if attention else 0,
                   "output": d_tok * 2 * H * V}
        counts[name] = {part: 3 * forward[part] for part in PARTS}  # + grads of input, weight
    s_pad, d_pad = B * int(src.max()), B * int(dec.max())
    # Per gate element and step: forward 11 (3 sigmoids as 0.5 tanh(0.5 x) + 0.5 = 4 each,
    # cell update 3, tanh(c) 1, h = o tanh(c) 1, over H of 4H: about 21 per unit); backward
    # about 25 per unit. Softmax cross-entropy: max, subtract, exp, sum, log, and the
    # gradient (probability minus one-hot, scaled): about 8 per logit.
    gates = (21 + 25) * H * n_layers * (s_pad + d_pad)
    softmax = 8 * V * d_pad
    attend = 8 * B * int(src.max() * dec.max()) if attention else 0
    elementwise = {"lstm gates": gates, "softmax": softmax, "attention softmax": attend}
    return StepCount(counts["useful"], counts["padded"], elementwise)


def step_flops(model, xs, ys):
    """``count_flops`` for ``model`` (a ``Seq2seq``) on source and target id arrays."""
    return count_flops(model.n_units, model.n_layers, model.W_o.W.shape[0], model.attention,
                       [len(x) for x in xs], [len(y) for y in ys])


def _gemm_shape(function, in_data):
    """``(batch, m, k, n)`` of a Chainer GEMM node, or None for any other function."""
    kind = type(function).__name__
    if kind == "LinearFunction":  # x (N, in) @ W.T, W (out, in)
        x, W = in_data[:2]
        return 1, x.shape[0], x.shape[1], W.shape[0]
    if kind == "LinearGradData":  # gy (N, out) @ W (out, in)
        W, gy = in_data
        return 1, gy.shape[0], gy.shape[1], W.shape[1]
    if kind == "LinearGradWeight":  # gy.T (out, N) @ x (N, in)
        x, gy = in_data
        return 1, gy.shape[1], gy.shape[0], x.shape[1]
    if kind == "MatMul":
        a, b = in_data
        if a.ndim < 2 or b.ndim < 2:
            raise NotImplementedError("GemmMeter: matmul of a vector")
        m, k = a.shape[-2:][::-1] if function.transa else a.shape[-2:]
        n = b.shape[-2] if function.transb else b.shape[-1]
        batch = int(np.prod(np.broadcast_shapes(a.shape[:-2], b.shape[:-2]), dtype=np.int64))
        return batch, m, k, n
    return None


class GemmMeter(chainer.FunctionHook):
    """Counts and times every matrix product of the steps run inside ``with GemmMeter():``.

    It sees Chainer's own GEMM functions (``linear`` and its gradients, ``matmul``) through a
    function hook, and the products inside ``dlhack.model``'s own functions through their
    module-level ``matmul``, which it replaces while it is active. Each call is recorded as
    ``(phase, (batch, m, k, n), seconds)``; ``phase`` is whatever the caller set last.
    """

    name = "GemmMeter"

    def __init__(self, timer=time.perf_counter):
        self.calls = []
        self.timer = timer
        self.phase = None
        self._started = []
        self._saved = {}

    def forward_preprocess(self, function, in_data):
        self._started.append(self.timer())

    def forward_postprocess(self, function, in_data):
        seconds = self.timer() - self._started.pop()
        shape = _gemm_shape(function, in_data)
        if shape is not None:
            self.calls.append((self.phase, shape, seconds))

    def _metered(self, matmul):
        def timed(a, b, *args, **kwargs):
            start = self.timer()
            out = matmul(a, b, *args, **kwargs)
            batch = int(np.prod(out.shape[:-2], dtype=np.int64))
            self.calls.append((self.phase, (batch, a.shape[-2], a.shape[-1], b.shape[-1]),
                               self.timer() - start))
            return out
        return timed

    def __enter__(self):
        for name in METERED_MODULES:
            module = importlib.import_module(name)
            self._saved[name] = module.matmul
            module.matmul = self._metered(module.matmul)
        return super().__enter__()

    def __exit__(self, *exc):
        for name, matmul in self._saved.items():
            importlib.import_module(name).matmul = matmul
        self._saved = {}
        return super().__exit__(*exc)

    def flops(self, phase=None):
        """Operations of the recorded products (of one phase, or all)."""
        return sum(2 * b * m * k * n for p, (b, m, k, n), _ in self.calls
                   if phase is None or p == phase)

    def seconds(self, phase=None):
        """Seconds spent in the recorded products (of one phase, or all)."""
        return sum(s for p, _, s in self.calls if phase is None or p == phase)

    def shapes(self):
        """``{(batch, m, k, n): calls}`` over everything recorded."""
        counts = {}
        for _, shape, _ in self.calls:
            counts[shape] = counts.get(shape, 0) + 1
        return counts
