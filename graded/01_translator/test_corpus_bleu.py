"""Exercise 3 of lab 01: ``corpus_bleu(hypotheses, references)`` on token lists, from n-gram counts.

The ranks observe what the answer returned, with sacrebleu's BLEU and ``dlhack.bleu`` switched
off while it runs, so the answer must count for itself; the grader's check compares it with the
reference written in translator.py from BLEU's definition.
"""
import pytest
from translator import (
    HYPOTHESES,
    HYPOTHESES_EN,
    REFERENCES,
    REFERENCES_EN,
    bleu_problem,
    no_library_bleu,
    number_observed,
    tokens,
)

SETS = {"Japanese": (HYPOTHESES, REFERENCES), "English": (HYPOTHESES_EN, REFERENCES_EN)}


def words(sentence):
    return sentence.split()


CASES = {
    "a hypothesis repeating a reference word": (
        [words("the the the the the cat sat on the mat"), words("a b c d e")],
        [words("the cat sat on the mat today"), words("a b c d e")]),
    "hypotheses shorter than their references": (
        [words("the cat sat on"), words("one two three four five")],
        [words("the cat sat on the mat"), words("one two three four five six seven")]),
    "no 4-gram in common": (
        [words("a b c x d e f")], [words("a b c y d e f")]),
}


def scores(submission, cases):
    """``{case: number_observed(the answer's BLEU)}``, library BLEU switched off meanwhile."""
    found = {}
    for name, (hyps, refs) in cases.items():
        with no_library_bleu():
            found[name] = number_observed(submission.corpus_bleu(hyps, refs))
    return found


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_matches_reference(submission, observe):
    """Five Japanese and four English sentences: corpus BLEU, not the mean of sentence BLEU."""
    observe(got=scores(submission, {name: (tokens(h), tokens(r))
                                    for name, (h, r) in SETS.items()}))


def check_matches_reference(obs, run):
    for name, (hyps, refs) in SETS.items():
        found = bleu_problem(obs["got"][name], tokens(hyps), tokens(refs))
        if found is not None:
            return f"on the {name} sentences, {found}"
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_clipping_brevity_and_no_match(submission, observe):
    """Repeated words are clipped, short output pays the brevity penalty, no 4-gram match is 0."""
    observe(got=scores(submission, CASES))


def check_clipping_brevity_and_no_match(obs, run):
    for name, (hyps, refs) in CASES.items():
        found = bleu_problem(obs["got"][name], hyps, refs)
        if found is not None:
            return f"with {name}: {found}"
    return None
