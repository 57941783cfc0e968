"""Shared by the graded tests of lab 01: seeded models and batches, the library's own results
as the reference, and hints for the commonest wrong answers.

Every reference comes from ``dlhack.model.seq2seq.Seq2seq`` itself (``model(xs, ys)`` for the loss,
``model.translate`` for greedy translation, ``dlhack.bleu.corpus_bleu`` for BLEU), computed in
the same process on the same weights, so the comparison does not depend on the machine.
"""
import chainer
import chainer.functions as F
import numpy as np

from dlhack.model.seq2seq import BOS, EOS, PAD, Seq2seq, pad

SRC_VOCAB, TGT_VOCAB = 11, 13
SRC_LENGTHS = (5, 3, 7, 1, 4)
TGT_LENGTHS = (4, 6, 2, 5, 1)  # lengths differ, so padding and masking matter


def make_model(seed=0, n_units=16, n_layers=2, attention=True, dropout=0.0):
    """A small translator with weights drawn from ``seed`` (Chainer draws from numpy's RNG)."""
    np.random.seed(seed)
    return Seq2seq(SRC_VOCAB, TGT_VOCAB, n_units=n_units, n_layers=n_layers, dropout=dropout,
                   attention=attention)


def make_batch(seed=0, src_lengths=SRC_LENGTHS, tgt_lengths=TGT_LENGTHS):
    """Source and target id arrays (no <s>/<eos>), ids 3 and up, as the corpus gives them."""
    rng = np.random.default_rng(seed)
    xs = [rng.integers(3, SRC_VOCAB, n).astype(np.int32) for n in src_lengths]
    ys = [rng.integers(3, TGT_VOCAB, n).astype(np.int32) for n in tgt_lengths]
    return xs, ys


def as_float(loss):
    """The learner's loss as a float, or None when it is not a scalar."""
    value = loss.array if isinstance(loss, chainer.Variable) else loss
    value = np.asarray(value)
    return float(value) if value.size == 1 else None


# --- the loss, and the usual ways it goes wrong -------------------------------------------

def _variant_loss(model, xs, ys, read, predict, target_pad=PAD, reduce="sentence", attend=True):
    """A loss computed one decoder step at a time, reading ``read(y)``, predicting ``predict(y)``.

    With read = <s> y, predict = y <eos>, padding -1, reduce "sentence" and attention this is
    the loss of ``model(xs, ys)``; the other settings are the mistakes that the hints name.
    """
    with chainer.no_backprop_mode():
        h, c, enc, mask = model.encode(xs)
        ys_in = pad([read(y) for y in ys], np)
        ys_out = pad([predict(y) for y in ys], np, value=target_pad)
        outs = []
        for t in range(ys_in.shape[1]):
            out, h, c = model.decode_step(ys_in[:, t], h, c)
            outs.append(out)
        dec = F.stack(outs, axis=1)
        logits = model.logits(model.output_features(dec, enc, mask) if attend else dec)
        tokens = F.softmax_cross_entropy(logits, ys_out.reshape(-1), reduce="no",
                                         ignore_label=PAD).array.reshape(ys_out.shape)
    real = ys_out != PAD
    if reduce == "tokens":
        return float(tokens.sum() / real.sum())
    if reduce == "sum":
        return float(tokens.sum())
    if reduce == "sentence-mean":  # mean over sentences of each sentence's mean token loss
        return float(np.mean(tokens.sum(axis=1) / real.sum(axis=1)))
    return float(tokens.sum() / len(xs))


def _cat(*parts):
    return np.concatenate([np.asarray(p, np.int32) for p in parts])


REDUCE_HINTS = {
    "sentence": None,
    "tokens": "it is a mean over target tokens, but this loss is the mean over sentences of each "
              "sentence's summed token loss: sum every token's loss, then divide by len(xs) "
              "(F.softmax_cross_entropy averages over tokens unless reduce='no')",
    "tokens/B": "it is a mean over tokens divided by the batch size: F.softmax_cross_entropy "
                "already averaged over tokens; pass reduce='no', sum, then divide by len(xs)",
    "sum": "it is the sum over the batch: divide by the number of sentences, len(xs)",
    "sentence-mean": "it averages each sentence's tokens first: sum every token's loss, then "
                     "divide by the number of sentences only",
}
SWAPPED = "input and target are swapped: the decoder reads <s> y and predicts y <eos>"
PADDING_COUNTED = ("the padding is counted as <unk> targets: pad the targets with -1 (PAD) and "
                   "pass ignore_label=-1 to F.softmax_cross_entropy")
NO_ATTENTION = ("the attention is missing: pass the decoder outputs through "
                "model.output_features(dec, enc, mask) before model.logits")
OFF_BY_ONE = ("off by one: the decoder reads <s> y and predicts y <eos> (the target is the "
              "input shifted left by one)")


def loss_hint(model, xs, ys, got, want):
    """A sentence on what the learner's loss (a float) most likely did wrong."""
    bos, eos = [BOS], [EOS]
    shifts = [  # (read, predict, hint)
        (lambda y: _cat(bos, y), lambda y: _cat(y, eos), None),
        (lambda y: _cat(y, eos), lambda y: _cat(bos, y), SWAPPED),
        (lambda y: _cat(bos, y), lambda y: _cat(bos, y), OFF_BY_ONE),
        (lambda y: _cat(y, eos), lambda y: _cat(y, eos), OFF_BY_ONE),
    ]
    pads = [(PAD, None), (0, PADDING_COUNTED)]
    attends = [(True, None)] + [(False, NO_ATTENTION)] * model.attention
    for read, predict, shift_hint in shifts:
        for target_pad, pad_hint in pads:
            for attend, attend_hint in attends:
                for reduce, reduce_hint in REDUCE_HINTS.items():
                    hints = [h for h in (shift_hint, pad_hint, attend_hint, reduce_hint) if h]
                    if not hints:
                        continue  # the right loss
                    value = _variant_loss(model, xs, ys, read, predict, target_pad,
                                          "tokens" if reduce == "tokens/B" else reduce, attend)
                    value /= len(xs) if reduce == "tokens/B" else 1
                    if np.isclose(got, value, rtol=1e-4, atol=1e-5):
                        return "; and ".join(hints)
    return (f"it is {got / want:.3g} times the reference; compare your steps with the recipe "
            f"above the exercise")


def loss_problem(model, xs, ys, loss, name="your loss"):
    """None when ``loss`` is the loss of ``model(xs, ys)``; else what is wrong, in words."""
    if loss is None:
        return "decoder_loss returned None: did it forget to `return` the loss?"
    if not isinstance(loss, chainer.Variable):
        return (f"decoder_loss returned a {type(loss).__name__}, not a chainer.Variable: build it "
                f"with chainer.functions (F.sum, F.softmax_cross_entropy), never from .array, or "
                f"backward() has nothing to run")
    got = as_float(loss)
    if got is None:
        return (f"decoder_loss returned a Variable of shape {loss.shape}: return one number, "
                f"the summed token loss divided by the number of sentences")
    with chainer.no_backprop_mode():
        want = float(model(xs, ys).array)
    if np.isclose(got, want, rtol=1e-4, atol=1e-5):
        return None
    return (f"{name} is {got:.6g}, the reference (model(xs, ys)) is {want:.6g}: "
            + loss_hint(model, xs, ys, got, want))


def gradients(model, loss):
    """``{parameter name: gradient copy or None}`` after ``loss.backward()``."""
    model.cleargrads()
    loss.backward()
    return {name: None if p.grad is None else p.grad.copy() for name, p in model.namedparams()}


# --- greedy translation ----------------------------------------------------------------------

def translation_model(max_length, dropout=0.0):
    """A seeded model whose greedy translations of ``make_batch()`` stop at every kind of place.

    Random weights give varied outputs; of the first seeds, take one where some sentences stop
    at <eos> at different steps and some run to ``max_length``.
    """
    xs, _ = make_batch(1, src_lengths=(5, 3, 7, 1, 4, 6, 2))
    for seed in range(50):
        model = make_model(seed, dropout=dropout)
        lengths = {len(y) for y in model.translate(xs, max_length)}
        if max_length in lengths and len(lengths) >= 3:
            return model, xs
    return model, xs  # (not reached with the library's initialisers; still a fair test)


def translation_problem(got, want, max_length, advice=True):
    """None when the learner's translations ``got`` equal ``want``; else what differs.

    With ``advice=False`` a difference in the tokens is only described, without the usual
    causes (for a caller that knows the cause better).
    """
    if got is None:
        return "greedy_translate returned None: did it forget to `return` the translations?"
    if not isinstance(got, (list, tuple)):
        return (f"greedy_translate returned a {type(got).__name__}: return a list with one id "
                f"array per sentence")
    if len(got) != len(want):
        return (f"greedy_translate returned {len(got)} translations for {len(want)} sentences "
                f"(one per source sentence, in order; a (steps, B) array must be split by "
                f"column, not by row)")
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(chainer.backend.CpuDevice().send(g)).ravel()
        if np.array_equal(g, w):
            continue
        where = f"sentence {i}: got {g.tolist()}, expected {w.tolist()}"
        if len(g) and g[0] == BOS:
            return f"{where}. The translation should not start with <s> ({BOS}): leave it out"
        if EOS in g.tolist():
            return (f"{where}. It contains <eos> ({EOS}): cut each translation just before its "
                    f"first <eos>")
        if len(g) > max_length:
            return f"{where}. It is longer than max_length={max_length}"
        if len(g) > len(w) and np.array_equal(g[:len(w)], w):
            return (f"{where}. It goes on after the reference stops: the reference stopped at "
                    f"<eos> there (cut at the first <eos>, and do not include it)")
        if len(g) < len(w) and np.array_equal(g, w[:len(g)]):
            return (f"{where}. It stops too early: run up to max_length steps and cut each "
                    f"sentence at its own first <eos>")
        first = next((k for k in range(min(len(g), len(w))) if g[k] != w[k]), min(len(g), len(w)))
        if not advice:
            return where
        return (f"{where}. They part at position {first}: at each step feed back the argmax of "
                f"the previous step (starting from <s>), carry h and c from decode_step to the "
                f"next step, and turn the output into logits through model.output_features "
                f"(attention) and model.logits")
    return None


# --- BLEU ------------------------------------------------------------------------------------

# Already tokenised, as the corpus is: hypotheses and one reference each.
HYPOTHESES = [
    "トム は 昨日 りんご を 三 つ 食べ た 。",
    "彼女 は 駅 に 行 き ま し た か ？",
    "私 は 猫 が 好き だ 。",
    "机 の 上 に 本 が あ る 。",
    "ケン は テニス を し な かっ た 。",
]
REFERENCES = [
    "トム は 昨日 りんご を 三 つ 食べ た 。",
    "彼女 は 学校 に 行 き ま し た か ？",
    "私 は 犬 が 好き だ 。",
    "机 の 下 に 本 が あ る 。",
    "ケン は 公園 で テニス を し な かっ た 。",
]
# English tokens with ASCII punctuation inside: a re-tokenising BLEU (sacrebleu's default
# "13a") splits "u.s." and "well-known" into several tokens and scores something else.
HYPOTHESES_EN = [
    "the u.s. team is well-known .",
    "it 's 3.5 km to the e-mail office .",
    "tom 's dog ran to the u.k. .",
    "she said \" no \" to me .",
]
REFERENCES_EN = [
    "the u.s. team was well-known .",
    "it 's 3.5 miles to the post office .",
    "tom 's cat ran to the u.k. .",
    "she said \" yes \" to him .",
]


def tokens(sentences):
    return [s.split() for s in sentences]


def bleu_hint(got, hyps, refs):
    """What the learner's BLEU ``got`` most likely computed instead ('' when unknown)."""
    import sacrebleu

    hyp, ref = [" ".join(h) for h in hyps], [" ".join(r) for r in refs]
    want = sacrebleu.corpus_bleu(hyp, [ref], tokenize="none").score
    sentence_mean = np.mean([sacrebleu.sentence_bleu(h, [r], tokenize="none").score
                             for h, r in zip(hyp, ref)])
    if np.isclose(got, sentence_mean, atol=1e-4):
        return (": it is the mean of sentence BLEU scores. Corpus BLEU adds up the n-gram counts "
                "of all sentences first and takes the geometric mean once "
                "(sacrebleu.corpus_bleu)")
    if np.isclose(got * 100, want, atol=1e-4):
        return ": it is on a 0-1 scale; report BLEU from 0 to 100, as sacrebleu's .score does"
    for tokenize in ("13a", "intl", "char"):
        if np.isclose(got, sacrebleu.corpus_bleu(hyp, [ref], tokenize=tokenize).score, atol=1e-4):
            return (f": it equals BLEU with sacrebleu's tokenize={tokenize!r}, which splits the "
                    f"tokens again; the corpus is already tokenised, so join the tokens with "
                    f"spaces and pass tokenize='none'")
    glued = sacrebleu.corpus_bleu(["".join(h) for h in hyps], [["".join(r) for r in refs]],
                                  tokenize="none").score
    if np.isclose(got, glued, atol=1e-4):
        return ": the tokens were joined without spaces; join them with ' '"
    return ""


def bleu_problem(got, hyps, refs):
    """None when ``got`` is the corpus BLEU of ``hyps`` against ``refs``; else what is wrong."""
    from dlhack.bleu import corpus_bleu

    want = corpus_bleu(hyps, refs)
    if got is None:
        return "corpus_bleu returned None: did it forget to `return` the score?"
    if hasattr(got, "score"):
        return "corpus_bleu returned sacrebleu's BLEU object: return its .score, a float"
    try:
        got = float(got)
    except (TypeError, ValueError):
        return f"corpus_bleu returned a {type(got).__name__}, not a number"
    if np.isclose(got, want, atol=1e-4):
        return None
    return f"your BLEU is {got:.4g}, the reference is {want:.4g}" + bleu_hint(got, hyps, refs)
