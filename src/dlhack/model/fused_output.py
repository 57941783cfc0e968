"""The output layer and the softmax cross-entropy over the vocabulary as one Chainer function:
the fused sibling of ``Seq2seq``'s ``W_o`` then ``F.softmax_cross_entropy`` (read
``dlhack.model.seq2seq`` first).

    loss, = OutputLoss(targets, normalizer, mask).apply((features, W_o.W, W_o.b))

The loss is a scalar, so its gradients are known as soon as it is: softmax minus one-hot,
times the incoming gradient, which backward only multiplies in. Forward therefore works through
the tokens ``ROWS`` at a time: logits, probabilities, this block's share of the loss and of
every gradient (features (N, H), W (V, H), b (V,)), and the block is gone. Backward scales the
three gradients by the incoming one and hands them over.

Memory: one (ROWS, V) block of logits at a time, never all N tokens' (a 1,000-token batch over
an 8,000-word vocabulary would hold 32 MB), and the dropout mask is dropped in forward; what
waits for backward, the three gradients, is what backward returns anyway. Costs: the products
of the unfused layer, in blocks of ROWS rows; W's gradient is summed over blocks (one pass over
(V, H) per block). The softmax's steps are one pass of ``elementwise.c`` where
``dlhack.model.ckernels`` builds it (float32 on a CPU), numpy's passes elsewhere. With backprop
off (evaluation), only the loss is computed. A second backward through the same forward is
refused: its gradients were handed over.
"""
import chainer
import numpy as np
from chainer import backend

from dlhack.model.ckernels import address, kernels_for
from dlhack.model.dropout_mask import dropped
from dlhack.model.seq2seq import PAD

ROWS = 512  # tokens per block: the products stay large, a block of probabilities small


def matmul(a, b, out=None):
    """``a @ b`` (into ``out``). Every matrix product here goes through this name, so that
    ``dlhack.bench.flops.GemmMeter`` can count and time them."""
    return backend.get_array_module(a).matmul(a, b, out=out)


class OutputLoss(chainer.FunctionNode):
    """Inputs features (N, H), W (V, H), b (V,); output the summed cross-entropy of the
    targets (N,) over ``normalizer`` (padding, ``PAD``, ignored). ``mask``: (N, H) dropout
    mask of the features (already scaled, or a ``DropoutMask``), or None. ``overwrite``: the
    features' gradient goes over the features (read by nothing else: (N, H) less memory)."""

    def __init__(self, targets, normalizer, mask=None, overwrite=False):
        self.targets, self.normalizer, self.mask = targets, normalizer, mask
        self.overwrite = overwrite
        self.grads = None  # (features, W, b) gradients for a loss gradient of normalizer

    def forward(self, inputs):
        x, W, b = inputs
        xp = backend.get_array_module(x)
        with_grads = chainer.config.enable_backprop
        if with_grads:
            self.grads = (x if self.overwrite else xp.empty_like(x), xp.zeros_like(W),
                          xp.zeros_like(b))
        self.token_loss_sum = 0.0
        for start in range(0, len(x), ROWS):
            self._block(slice(start, start + ROWS), x, W, b, with_grads)
        self.mask = None  # only forward needed it
        return xp.asarray(self.token_loss_sum / self.normalizer, dtype=x.dtype),

    def _block(self, rows, x, W, b, with_grads):
        """One block of tokens: its loss into ``token_loss_sum``, its gradients (of the summed
        loss) into ``grads``."""
        x = x[rows] if self.mask is None else dropped(x[rows], self.mask[rows])
        p = matmul(x, W.T)  # (rows, V) logits, then probabilities, in place
        lib = kernels_for(p)
        self.token_loss_sum += (_softmax_numpy(p, b, self.targets[rows], with_grads)
                                if lib is None else
                                _softmax_compiled(lib, p, b, self.targets[rows], with_grads))
        if with_grads:
            self._add_grads(rows, x, W, p)

    def _add_grads(self, rows, x, W, p):
        """The block's share of the three gradients, from ``p``, the gradient of its summed
        loss with respect to its logits (``x``: its features, dropped out)."""
        g_x, g_W, g_b = self.grads
        g_W += matmul(p.T, x)  # before g_x: that may go over x
        g_b += p.sum(axis=0)
        matmul(p, W, out=g_x[rows])
        if self.mask is not None:
            dropped(g_x[rows], self.mask[rows], out=g_x[rows])

    def backward(self, indexes, grad_outputs):
        if self.grads is None:
            raise RuntimeError("OutputLoss's backward runs once per forward, with backprop on: "
                               "it hands over the gradients forward computed")
        scale = grad_outputs[0].array / self.normalizer
        out = []
        for i in indexes:
            g = self.grads[i]
            g *= scale.astype(g.dtype)
            out.append(chainer.Variable(g))
        self.grads = None
        return tuple(out)


def _softmax_numpy(z, b, targets, with_grads):
    """The summed cross-entropy of the rows of logits ``z`` (bias ``b`` added) against
    ``targets`` (``PAD``: no loss); with grads, ``z`` becomes that sum's gradient, softmax minus
    one-hot (zero rows for padding), in place."""
    xp = backend.get_array_module(z)
    valid = targets != PAD
    at = (xp.arange(len(z)), xp.where(valid, targets, 0))
    z += b
    z -= z.max(axis=1, keepdims=True)
    picked = z[at]  # the target's logit, less the row's maximum
    xp.exp(z, out=z)
    total = z.sum(axis=1)
    loss = float(((xp.log(total) - picked) * valid).sum())
    if with_grads:
        z /= total[:, None]
        z[at] -= 1  # softmax minus one-hot, for real tokens only:
        z *= valid[:, None]
    return loss


def _softmax_compiled(lib, z, b, targets, with_grads):
    """``_softmax_numpy`` in one call of ``elementwise.c`` (``lib``: float32 on a CPU)."""
    targets = np.ascontiguousarray(targets, dtype=np.int32)
    loss = np.zeros(1)
    lib.softmax_xent_rows(len(z), z.shape[1], address(z), address(np.ascontiguousarray(b)),
                          address(targets), int(with_grads), address(loss))
    return float(loss[0])
