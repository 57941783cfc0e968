# MUTANT: delegates to the library's own loss, model(xs, ys)
# EXPECT: model(xs, ys), the library's own loss
# FAST
import numpy as np
import chainer.functions as F

from dlhack.model.seq2seq import BOS, EOS, PAD, pad


def decoder_loss(model, xs, ys):
    """The training loss of ``model`` on one batch, with the decoder run one step at a time.

    Args:
        model: a ``dlhack.model.seq2seq.Seq2seq``.
        xs: list of source id arrays (int32, no <s>/<eos>).
        ys: list of target id arrays (int32, no <s>/<eos>).

    Returns:
        A scalar ``chainer.Variable``: the summed token cross-entropy divided by ``len(xs)``,
        equal to ``model(xs, ys)`` when the model has no dropout.
    """
    ### BEGIN SOLUTION
    return model(xs, ys)
    ### END SOLUTION
