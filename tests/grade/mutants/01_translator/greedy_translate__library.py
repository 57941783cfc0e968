# MUTANT: delegates to the library's model.translate
# EXPECT: model.translate, the library's own greedy translation
# FAST
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
    return model.translate(xs, max_length)
    ### END SOLUTION
