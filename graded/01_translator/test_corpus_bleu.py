"""Exercise 3 of lab 01: ``corpus_bleu(hypotheses, references)`` on token lists, from n-gram counts.

The reference is written in translator.py from BLEU's definition; while the answer runs,
sacrebleu's BLEU and ``dlhack.bleu`` are switched off, so the answer must count for itself.
"""
import pytest
from translator import (
    HYPOTHESES,
    HYPOTHESES_EN,
    REFERENCES,
    REFERENCES_EN,
    bleu_problem,
    no_library_bleu,
    tokens,
)


def words(sentence):
    return sentence.split()


def problem(submission, hyps, refs):
    with no_library_bleu():
        got = submission.corpus_bleu(hyps, refs)
    return bleu_problem(got, hyps, refs)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_matches_reference(submission):
    """Five Japanese and four English sentences: corpus BLEU, not the mean of sentence BLEU."""
    for name, hyps, refs in [("Japanese", HYPOTHESES, REFERENCES),
                             ("English", HYPOTHESES_EN, REFERENCES_EN)]:
        found = problem(submission, tokens(hyps), tokens(refs))
        assert found is None, f"on the {name} sentences, {found}"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_clipping_brevity_and_no_match(submission):
    """Repeated words are clipped, short output pays the brevity penalty, no 4-gram match is 0."""
    cases = {
        "a hypothesis repeating a reference word": (
            [words("the the the the the cat sat on the mat"), words("a b c d e")],
            [words("the cat sat on the mat today"), words("a b c d e")]),
        "hypotheses shorter than their references": (
            [words("the cat sat on"), words("one two three four five")],
            [words("the cat sat on the mat"), words("one two three four five six seven")]),
        "no 4-gram in common": (
            [words("a b c x d e f")], [words("a b c y d e f")]),
    }
    for name, (hyps, refs) in cases.items():
        found = problem(submission, hyps, refs)
        assert found is None, f"with {name}: {found}"
