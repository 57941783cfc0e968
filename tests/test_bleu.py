"""Corpus BLEU on the corpus's own tokens (dlhack.bleu), against BLEU computed here from its
definition: n-gram precisions clipped and pooled over the corpus, their geometric mean, and the
brevity penalty."""
import math
from collections import Counter

import pytest

from dlhack.bleu import corpus_bleu

HYPS = ["the cat sat on the mat today .", "a dog ran in the big park , fast ."]
REFS = ["the cat sat on the red mat today .", "the dog ran in the big park ."]


def ngrams(tokens, n):
    return Counter(tuple(tokens[i:i + n]) for i in range(len(tokens) - n + 1))


def reference_bleu(hypotheses, references):
    """BLEU from its definition, without smoothing (every n-gram order must match somewhere)."""
    matches, totals = [0] * 4, [0] * 4
    for hyp, ref in zip(hypotheses, references):
        for n in range(1, 5):
            h, r = ngrams(hyp.split(), n), ngrams(ref.split(), n)
            matches[n - 1] += sum(min(count, r[gram]) for gram, count in h.items())
            totals[n - 1] += sum(h.values())
    hyp_len = sum(len(h.split()) for h in hypotheses)
    ref_len = sum(len(r.split()) for r in references)
    brevity = 1.0 if hyp_len > ref_len else math.exp(1 - ref_len / hyp_len)
    return 100 * brevity * math.exp(sum(math.log(m / t) for m, t in zip(matches, totals)) / 4)


def test_corpus_bleu_is_the_definition():
    assert corpus_bleu(HYPS, REFS) == pytest.approx(reference_bleu(HYPS, REFS), rel=1e-9)


def test_token_lists_and_strings_score_alike_and_are_not_retokenised():
    as_lists = corpus_bleu([h.split() for h in HYPS], [r.split() for r in REFS])
    assert as_lists == corpus_bleu(HYPS, REFS)
    # "can't" is one token of the corpus: a tokeniser that split it would find a match here.
    assert corpus_bleu(["i can't go there now ."], ["i can 't go there now ."]) < 50


def test_pooled_over_the_corpus_not_the_mean_of_sentences():
    whole = corpus_bleu(HYPS, REFS)
    mean = sum(corpus_bleu([h], [r]) for h, r in zip(HYPS, REFS)) / 2
    assert abs(whole - mean) > 1


def test_a_perfect_translation_scores_100_and_mismatched_lists_are_refused():
    assert corpus_bleu(REFS, REFS) == pytest.approx(100)
    with pytest.raises(ValueError, match="2 hypotheses but 1 references"):
        corpus_bleu(HYPS, REFS[:1])
