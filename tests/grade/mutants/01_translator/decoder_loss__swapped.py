# MUTANT: reads y <eos> and predicts <s> y: input and target swapped
# EXPECT: swapped
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
    xp = model.xp
    h, c, enc, mask = model.encode(xs)
    bos, eos = xp.array([BOS], np.int32), xp.array([EOS], np.int32)
    ys_in = pad([xp.concatenate([xp.asarray(y), eos]) for y in ys], xp)   # (B, T): <s> y
    ys_out = pad([xp.concatenate([bos, xp.asarray(y)]) for y in ys], xp)  # (B, T): y <eos>
    outs = []
    for t in range(ys_in.shape[1]):  # teacher forcing: step t reads the reference token t
        out, h, c = model.decode_step(ys_in[:, t], h, c)
        outs.append(out)
    dec = F.stack(outs, axis=1)  # (B, T, H)
    logits = model.logits(model.output_features(dec, enc, mask))  # (B*T, V)
    token_loss = F.softmax_cross_entropy(logits, ys_out.reshape(-1), reduce="no",
                                         ignore_label=PAD)
    return F.sum(token_loss) / len(xs)
    ### END SOLUTION
