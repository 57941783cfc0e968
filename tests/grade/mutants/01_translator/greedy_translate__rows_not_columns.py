# MUTANT: splits the (steps, B) array by row: one array per step, not per sentence
# EXPECT: split by column
import numpy as np
import chainer

from dlhack.model.seq2seq import BOS, EOS


def greedy_translate(model, xs, max_length=50):
    """Translate a batch greedily: at each step take the most likely token and feed it back.

    Args:
        model: a ``dlhack.model.seq2seq.Seq2seq``.
        xs: list of source id arrays (int32).
        max_length: the most tokens to produce per sentence.

    Returns:
        A list with one numpy id array per sentence, without <s> and cut before the first
        <eos>; as ``model.translate(xs, max_length)``.
    """
    ### BEGIN SOLUTION
    xp = model.xp
    with chainer.using_config("train", False), chainer.no_backprop_mode():
        h, c, enc, mask = model.encode(xs)
        y = xp.full(len(xs), BOS, np.int32)
        steps = []
        for _ in range(max_length):
            out, h, c = model.decode_step(y, h, c)
            logits = model.logits(model.output_features(out[:, None, :], enc, mask))  # (B, V)
            y = xp.argmax(logits.array, axis=1).astype(np.int32)  # fed back at the next step
            steps.append(chainer.backend.CpuDevice().send(y))
    result = []
    for ids in np.stack(steps, axis=0):  # (B, steps): one row per sentence
        stop = np.flatnonzero(ids == EOS)
        result.append(ids[:stop[0]] if len(stop) else ids)
    return result
    ### END SOLUTION
