"""Naming the step of lab 01's loss that is wrong: the grader recomputes the loss with each usual
mistake (and each pair of them) on the same weights and batch, and names the one whose value
the learner's loss matches.

    loss_hint(model, xs, ys, got, want)  # "off by one: the decoder reads <s> y ..." or a fallback

A forward pass per combination of forward-pass mistakes (about 50, each a few milliseconds on
the tests' small models, under no_backprop_mode); every reduction is read off its token losses.
"""
from itertools import combinations

import chainer
import chainer.functions as F
import numpy as np

from dlhack.model.seq2seq import BOS, EOS, PAD, pad


def _cat(*parts):
    return np.concatenate([np.asarray(p, np.int32) for p in parts])


def _shift(read, predict):
    return {"read": read, "predict": predict}


# Forward-pass mistakes: (group, settings, hint). Two mistakes of one group never go together.
MISTAKES = [
    ("shift", _shift(lambda y: _cat(y, [EOS]), lambda y: _cat([BOS], y)),
     "input and target are swapped: the decoder reads <s> y and predicts y <eos>"),
    ("shift", _shift(lambda y: _cat([BOS], y), lambda y: _cat([BOS], y)),
     ("off by one: the decoder reads <s> y and predicts y <eos> (the target is the input shifted "
      "left by one)")),
    ("shift", _shift(lambda y: _cat(y, [EOS]), lambda y: _cat(y, [EOS])),
     ("off by one: the decoder reads <s> y and predicts y <eos> (the target is the input shifted "
      "left by one)")),
    ("shift", _shift(lambda y: _cat([BOS], y[:-1]), lambda y: _cat(y)),
     ("the target has no <eos>: the decoder reads <s> y and predicts y <eos>, one step longer "
      "than y, so that it learns to stop")),
    ("pad", {"target_pad": 0},
     ("the padding is counted as <unk> targets: pad the targets with -1 (PAD) and pass "
      "ignore_label=-1 to F.softmax_cross_entropy")),
    ("attend", {"attend": False},
     ("the attention is missing: pass the decoder outputs through "
      "model.output_features(dec, enc, mask) before model.logits")),
    ("source", {"reverse": True},
     "the source sentences are reversed: encode xs as they are (this model reads them forwards)"),
    ("carry", {"carry": False},
     ("every decoder step starts again from the encoder's final state: carry the h and c that "
      "decode_step returns on to the next step")),
    ("layout", {"time_major": True},
     ("the step outputs are stacked time-major, (T, B, H), but the targets flattened batch-major, "
      "(B, T): stack them with F.stack(outs, axis=1), so that row b * T + t of the logits is "
      "sentence b's step t, as in ys_out.reshape(-1)")),
]

# Reductions of the (B, T) token losses (zero where the target is ignored): name -> (how, hint).
REDUCTIONS = {
    "sentence": (lambda tok, real: tok.sum() / tok.shape[0], None),
    "tokens": (lambda tok, real: tok.sum() / real.sum(),
               ("it is a mean over target tokens, but this loss is the mean over sentences of each "
                "sentence's summed token loss: sum every token's loss, then divide by len(xs) "
                "(F.softmax_cross_entropy averages over tokens unless reduce='no')")),
    "tokens/B": (lambda tok, real: tok.sum() / real.sum() / tok.shape[0],
                 ("it is a mean over tokens divided by the batch size: F.softmax_cross_entropy "
                  "already averaged over tokens; pass reduce='no', sum, then divide by len(xs)")),
    "sum": (lambda tok, real: tok.sum(),
            "it is the sum over the batch: divide by the number of sentences, len(xs)"),
    "sentence-mean": (lambda tok, real: np.mean(tok.sum(axis=1) / np.maximum(real.sum(axis=1), 1)),
                      ("it averages each sentence's tokens first: sum every token's loss, then "
                       "divide by the number of sentences only")),
    "positions": (lambda tok, real: tok.mean(),
                  ("it is a mean over every padded position (B x T, the ignored padding's zeros "
                   "included, as F.mean gives): sum the token losses, then divide by len(xs)")),
    "steps": (lambda tok, real: tok.sum() / tok.shape[1],
              ("it divides by the number of decoder steps (T, the padded length): divide the "
               "summed token loss by the number of sentences, len(xs)")),
}


def token_losses(model, xs, ys, read=None, predict=None, target_pad=PAD, attend=True,
                 reverse=False, carry=True, time_major=False):
    """``(tokens, real)``: the (B, T) token losses of one way of computing the loss, and where the
    target is a real token. The defaults are the course's loss."""
    read = read or (lambda y: _cat([BOS], y))
    predict = predict or (lambda y: _cat(y, [EOS]))
    with chainer.no_backprop_mode():
        h, c, enc, mask = model.encode([x[::-1] for x in xs] if reverse else xs)
        ys_in = pad([read(y) for y in ys], np)
        ys_out = pad([predict(y) for y in ys], np, value=target_pad)
        if ys_out.shape != ys_in.shape:
            return None
        outs, h0, c0 = [], h, c
        for t in range(ys_in.shape[1]):
            out, h, c = model.decode_step(ys_in[:, t], h if carry else h0, c if carry else c0)
            outs.append(out)
        dec = F.stack(outs, axis=0 if time_major else 1)
        logits = model.logits(model.output_features(dec, enc, mask) if attend else dec)
        tokens = F.softmax_cross_entropy(logits, ys_out.reshape(-1), reduce="no",
                                         ignore_label=PAD).array.reshape(ys_out.shape)
    return tokens, ys_out != PAD


def _candidates(model):
    """Sets of forward mistakes, fewest first: none, each one, each pair of different groups."""
    usable = [m for m in MISTAKES if m[0] != "attend" or model.attention]
    yield ()
    for one in usable:
        yield (one,)
    for pair in combinations(usable, 2):
        if pair[0][0] != pair[1][0]:
            yield pair


def loss_hint(model, xs, ys, got, want):
    """A sentence on what the learner's loss (a float) did wrong: the fewest usual mistakes
    whose loss matches ``got``, named; else the ratio to the reference and the recipe."""
    found, level = [], 0
    for mistakes in _candidates(model):
        if len(mistakes) > level and found:
            break  # a match with fewer mistakes is the likelier reading
        level = len(mistakes)
        settings = {k: v for _, s, _ in mistakes for k, v in s.items()}
        try:
            losses = token_losses(model, xs, ys, **settings)
        except Exception:  # noqa: BLE001, S112 - a mistake that cannot run on this model (shapes)
            continue
        if losses is None:
            continue
        for reduce, reduce_hint in REDUCTIONS.values():
            hints = [h for _, _, h in mistakes] + ([reduce_hint] if reduce_hint else [])
            if hints and np.isclose(got, float(reduce(*losses)), rtol=1e-4, atol=1e-5):
                found.append(hints)
    if found:
        best = min(found, key=len)
        return "; and ".join(dict.fromkeys(best))
    return (f"it is {got / want:.3g} times the reference, and none of the usual mistakes gives "
            f"it (the shift, the padding, the attention, the state carried, the stacking, the "
            f"reduction): compare your steps with the recipe above the exercise")
