"""Shared by the graded tests of lab 01: seeded models and batches, references written here,
and hints for the commonest wrong answers (the loss's: losshints.py).

The learner's functions get a ``NoShortcuts`` model: the translator with the library's own loss
(``model(xs, ys)``), translation (``model.translate``) and whole-sequence decoder switched off, so
an answer cannot pass by calling what it is checked against. The ranks only observe what the
answers returned (``loss_observed``, ``translations_observed``, ``number_observed``); the
references are computed in the grader's check halves, on the same seeded weights: the loss step
by step here (``reference_loss``), greedy translation by ``translate`` of an unguarded twin,
BLEU from n-gram counts here (``reference_bleu``), with sacrebleu and ``dlhack.bleu`` switched
off while the answer runs.
"""
import math
from collections import Counter
from contextlib import contextmanager

import chainer
import chainer.functions as F
import numpy as np
from losshints import loss_hint

from dlhack.model.seq2seq import BOS, EOS, PAD, Seq2seq, pad

SRC_VOCAB, TGT_VOCAB = 11, 13
SRC_LENGTHS = (5, 3, 7, 1, 4)
TGT_LENGTHS = (4, 6, 2, 5, 1)  # lengths differ, so padding and masking matter


class LibraryShortcut(RuntimeError):
    """Raised when an answer calls the library method that the exercise asks it to write."""


class NoShortcuts(Seq2seq):
    """The translator the answers get: building blocks on, the library's own answers off."""

    def forward(self, xs, ys):
        raise LibraryShortcut(
            "the answer called model(xs, ys), the library's own loss, which this check compares "
            "against: compute the loss yourself, running the decoder one step at a time with "
            "model.decode_step")

    def translate(self, xs, max_length=50):
        raise LibraryShortcut(
            "the answer called model.translate, the library's own greedy translation, which this "
            "check compares against: write the loop yourself with model.decode_step")

    def _guard(self, lstm):
        if lstm is self.decoder:
            raise LibraryShortcut(
                "the answer ran the library's whole-sequence decoder (model._run): run the "
                "decoder one step at a time with model.decode_step")

    def _run_fast(self, lstm, *args):
        self._guard(lstm)
        return super()._run_fast(lstm, *args)

    def _run_nstep(self, lstm, *args):
        self._guard(lstm)
        return super()._run_nstep(lstm, *args)


def make_model(seed=0, n_units=16, n_layers=2, attention=True, dropout=0.0, guarded=True):
    """A small translator with weights drawn from ``seed`` (Chainer draws from numpy's RNG).

    ``guarded`` (the default: what answers get) makes it a ``NoShortcuts``; the same seed gives
    the same weights and parameter names either way.
    """
    np.random.seed(seed)
    cls = NoShortcuts if guarded else Seq2seq
    return cls(SRC_VOCAB, TGT_VOCAB, n_units=n_units, n_layers=n_layers, dropout=dropout,
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

def reference_loss(model, xs, ys):
    """The course's loss, written here one decoder step at a time, as a Variable with its graph.

    The decoder reads ``<s> y`` and predicts ``y <eos>``; targets are padded with -1 and
    ignored; the summed token cross-entropy is divided by the number of sentences.
    """
    h, c, enc, mask = model.encode(xs)
    ys_in = pad([_cat([BOS], y) for y in ys], np)  # (B, T)
    ys_out = pad([_cat(y, [EOS]) for y in ys], np)  # (B, T)
    outs = []
    for t in range(ys_in.shape[1]):
        out, h, c = model.decode_step(ys_in[:, t], h, c)
        outs.append(out)
    logits = model.logits(model.output_features(F.stack(outs, axis=1), enc, mask))
    tokens = F.softmax_cross_entropy(logits, ys_out.reshape(-1), reduce="no", ignore_label=PAD)
    return F.sum(tokens) / len(xs)


def _cat(*parts):
    return np.concatenate([np.asarray(p, np.int32) for p in parts])


def loss_observed(loss):
    """What a rank hands the grader of the learner's loss: its kind and its value."""
    if isinstance(loss, chainer.Variable):
        return {"kind": "Variable", "value": np.asarray(loss.array)}
    return {"kind": None if loss is None else type(loss).__name__, "value": None}


def loss_problem(model, xs, ys, loss, name="your loss"):
    """None when ``loss`` (``loss_observed``'s) is the course's loss; else what is wrong, in words."""
    if loss["kind"] is None:
        return "decoder_loss returned None: did it forget to `return` the loss?"
    if loss["kind"] != "Variable":
        return (f"decoder_loss returned a {loss['kind']}, not a chainer.Variable: build it "
                f"with chainer.functions (F.sum, F.softmax_cross_entropy), never from .array, or "
                f"backward() has nothing to run")
    value = loss["value"]
    if not isinstance(value, np.ndarray) or value.size != 1:
        return (f"decoder_loss returned a Variable of shape {getattr(value, 'shape', '?')}: "
                f"return one number, the summed token loss divided by the number of sentences")
    got = float(value.reshape(()))
    with chainer.no_backprop_mode():
        want = float(reference_loss(model, xs, ys).array)
    if np.isclose(got, want, rtol=1e-4, atol=1e-5):
        return None
    return (f"{name} is {got:.6g}, the reference is {want:.6g}: "
            + loss_hint(model, xs, ys, got, want))


def gradients(model, loss):
    """``{parameter name: gradient copy or None}`` after ``loss.backward()``."""
    model.cleargrads()
    loss.backward()
    return {name: None if p.grad is None else p.grad.copy() for name, p in model.namedparams()}


# --- greedy translation ----------------------------------------------------------------------

def translation_model(max_length, dropout=0.0):
    """``(reference model, the answers' model, xs)``: seeded twins whose greedy translations of
    ``make_batch()`` stop at every kind of place.

    Random weights give varied outputs; of the first seeds, take one where some sentences stop
    at <eos> at different steps and some run to ``max_length``. The reference translates with
    the library's ``translate``; the answers get the ``NoShortcuts`` twin with the same weights.
    """
    xs, _ = make_batch(1, src_lengths=(5, 3, 7, 1, 4, 6, 2))
    for seed in range(50):
        model = make_model(seed, dropout=dropout, guarded=False)
        lengths = {len(y) for y in model.translate(xs, max_length)}
        if max_length in lengths and len(lengths) >= 3:
            break
    return model, make_model(seed, dropout=dropout), xs


def translations_observed(got):
    """What a rank hands the grader of the learner's translations: a list of id arrays, or the
    type's name of what came back instead (None stays None)."""
    if got is None:
        return None
    if not isinstance(got, (list, tuple)):
        return {"kind": type(got).__name__}
    return [np.asarray(chainer.backend.CpuDevice().send(g)).ravel() for g in got]


def translation_problem(got, want, max_length, advice=True):
    """None when the learner's translations ``got`` equal ``want``; else what differs.

    With ``advice=False`` a difference in the tokens is only described, without the usual
    causes (for a caller that knows the cause better).
    """
    if got is None:
        return "greedy_translate returned None: did it forget to `return` the translations?"
    if not isinstance(got, (list, tuple)):
        kind = got["kind"] if isinstance(got, dict) else type(got).__name__
        return f"greedy_translate returned a {kind}: return a list with one id array per sentence"
    if len(got) != len(want):
        return (f"greedy_translate returned {len(got)} translations for {len(want)} sentences "
                f"(one per source sentence, in order; a (steps, B) array must be split by "
                f"column, not by row)")
    for i, (g, w) in enumerate(zip(got, want)):
        g = np.asarray(g).ravel()
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


def reference_bleu(hypotheses, references, max_n=4):
    """Corpus BLEU (0-100), written here from its definition: clipped n-gram matches and
    n-gram counts pooled over every sentence, the geometric mean of the four precisions, and
    the brevity penalty ``exp(1 - r / c)`` when the hypotheses are shorter. 0 when some order
    has no match at all (no smoothing)."""
    matches, totals, hyp_len, ref_len = [0] * max_n, [0] * max_n, 0, 0
    for hyp, ref in zip(hypotheses, references):
        hyp_len, ref_len = hyp_len + len(hyp), ref_len + len(ref)
        for n in range(1, max_n + 1):
            hyp_grams = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
            ref_grams = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            matches[n - 1] += sum(min(k, ref_grams[g]) for g, k in hyp_grams.items())
            totals[n - 1] += max(len(hyp) - n + 1, 0)
    if hyp_len == 0 or min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / max_n
    brevity = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100 * brevity * math.exp(log_precision)


def _off(what):
    def refuse(*args, **kwargs):
        raise LibraryShortcut(
            f"the answer called {what}: this exercise asks you to compute BLEU yourself, from "
            f"n-gram counts, so library BLEU is switched off during the check")
    return refuse


_INHERITED = object()  # a method the class inherits: deleting our stand-in brings it back


@contextmanager
def no_library_bleu():
    """While the answer runs: sacrebleu's BLEU and ``dlhack.bleu`` raise ``LibraryShortcut``."""
    import sacrebleu
    from sacrebleu.metrics.bleu import BLEU

    import dlhack.bleu

    patches = [(BLEU, "corpus_score"), (BLEU, "sentence_score"), (BLEU, "compute_bleu"),
               (sacrebleu, "corpus_bleu"), (sacrebleu, "sentence_bleu"),
               (dlhack.bleu, "corpus_bleu")]
    saved = [(owner, name, vars(owner).get(name, _INHERITED)) for owner, name in patches]
    try:
        for owner, name in patches:
            setattr(owner, name, _off(f"{getattr(owner, '__name__', owner)}.{name}"))
        yield
    finally:
        for owner, name, value in saved:
            if value is _INHERITED:
                delattr(owner, name)
            else:
                setattr(owner, name, value)


def bleu_hint(got, hyps, refs):
    """What the learner's BLEU ``got`` most likely computed instead ('' when unknown)."""
    want = reference_bleu(hyps, refs)
    sentence_mean = np.mean([reference_bleu([h], [r]) for h, r in zip(hyps, refs)])
    if np.isclose(got, sentence_mean, atol=1e-4):
        return (": it is the mean of sentence BLEU scores. Corpus BLEU adds up the n-gram counts "
                "of all sentences first and takes the geometric mean once")
    if np.isclose(got * 100, want, atol=1e-4):
        return ": it is on a 0-1 scale; report BLEU from 0 to 100"
    precisions = _precisions(hyps, refs)
    c, r = sum(map(len, hyps)), sum(map(len, refs))
    brevity = min(1.0, math.exp(1 - r / c)) if c else 0.0
    if all(precisions) and brevity < 1 and np.isclose(
            got, 100 * math.exp(sum(map(math.log, precisions)) / 4), atol=1e-4):
        return (": the brevity penalty is missing: multiply by min(1, exp(1 - r / c)), with r "
                "and c the total reference and hypothesis lengths")
    if np.isclose(got, 100 * brevity * np.mean(precisions), atol=1e-4):
        return ": it is the arithmetic mean of the precisions; BLEU takes their geometric mean"
    if np.isclose(got, reference_bleu(hyps, refs, max_n=1), atol=1e-4):
        return ": it counts unigrams only; BLEU uses the n-grams of orders 1 to 4"
    unclipped = _unclipped_bleu(hyps, refs)
    if np.isclose(got, unclipped, atol=1e-4) and not np.isclose(unclipped, want):
        return (": n-gram matches are not clipped: a hypothesis n-gram counts at most as often "
                "as it occurs in the reference")
    if np.isclose(got, reference_bleu([[c for t in h for c in t] for h in hyps],
                                      [[c for t in r for c in t] for r in refs]), atol=1e-4):
        return ": it counts characters, not tokens"
    return ""


def _precisions(hyps, refs, max_n=4):
    """The pooled, clipped n-gram precisions (for hints)."""
    result = []
    for n in range(1, max_n + 1):
        m = t = 0
        for hyp, ref in zip(hyps, refs):
            hg = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
            rg = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            m += sum(min(k, rg[g]) for g, k in hg.items())
            t += max(len(hyp) - n + 1, 0)
        result.append(m / t if t else 0.0)
    return result


def _unclipped_bleu(hyps, refs, max_n=4):
    """BLEU with every matching n-gram counted, however often the reference has it (for hints)."""
    log_p, c, r = 0.0, sum(map(len, hyps)), sum(map(len, refs))
    for n in range(1, max_n + 1):
        m = t = 0
        for hyp, ref in zip(hyps, refs):
            rg = {tuple(ref[i:i + n]) for i in range(len(ref) - n + 1)}
            grams = [tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1)]
            m += sum(g in rg for g in grams)
            t += len(grams)
        if not m:
            return 0.0
        log_p += math.log(m / t) / max_n
    return 100 * (1.0 if c > r else math.exp(1 - r / c)) * math.exp(log_p)


def number_observed(got):
    """What a rank hands the grader of a learner's number: its value as a float, else None, and
    its type's name."""
    try:
        value = float(got)
    except (TypeError, ValueError):
        value = None
    return {"kind": None if got is None else type(got).__name__, "value": value}


def bleu_problem(got, hyps, refs):
    """None when ``got`` (``number_observed``'s) is the corpus BLEU of ``hyps`` against ``refs``;
    else what is wrong."""
    want = reference_bleu(hyps, refs)
    if got["kind"] is None:
        return "corpus_bleu returned None: did it forget to `return` the score?"
    if not isinstance(got["value"], float):
        return f"corpus_bleu returned a {got['kind']}, not a number"
    got = got["value"]
    if np.isclose(got, want, atol=1e-4):
        return None
    return f"your BLEU is {got:.4g}, the reference is {want:.4g}" + bleu_hint(got, hyps, refs)
