"""Exercise 3 of lab 01: ``corpus_bleu(hypotheses, references)`` on token lists."""
import pytest
from translator import HYPOTHESES, HYPOTHESES_EN, REFERENCES, REFERENCES_EN, bleu_problem, tokens


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_matches_reference(submission):
    """Five tokenised Japanese sentences: corpus BLEU, not the mean of sentence BLEU."""
    hyps, refs = tokens(HYPOTHESES), tokens(REFERENCES)
    problem = bleu_problem(submission.corpus_bleu(hyps, refs), hyps, refs)
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_tokens_kept_as_they_are(submission):
    """English tokens such as "u.s." and "well-known" are scored as one token each."""
    hyps, refs = tokens(HYPOTHESES_EN), tokens(REFERENCES_EN)
    problem = bleu_problem(submission.corpus_bleu(hyps, refs), hyps, refs)
    assert problem is None, problem
