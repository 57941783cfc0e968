"""Exercise 2 of lab 01: ``greedy_translate(model, xs, max_length)``, one token at a time.

The reference is the library's own ``model.translate`` on a twin with the same seeded weights;
the answer gets a model whose ``translate`` (and whole-sequence decoder) are switched off.
"""
import numpy as np
import pytest
from translator import translation_model, translation_problem


def problem_at(submission, max_length, dropout=0.0, advice=True):
    """What is wrong with the answer's translations at ``max_length`` (None if nothing)."""
    reference, model, xs = translation_model(max_length=10, dropout=dropout)
    want = reference.translate(xs, max_length=max_length)
    got = submission.greedy_translate(model, xs, max_length=max_length)
    return translation_problem(got, want, max_length, advice)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_matches_translate(submission):
    """Seven sentences: some stop at <eos> after a few tokens, some run to max_length."""
    problem = problem_at(submission, 10)
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_dropout_is_off(submission):
    """A model with dropout 0.5 translates the same way every time, as model.translate does."""
    problem = problem_at(submission, 10)
    assert problem is None, f"without dropout already: {problem}"
    for attempt in range(2):
        np.random.seed(attempt)  # dropout masks come from numpy's RNG
        problem = problem_at(submission, 10, dropout=0.5, advice=False)
        assert problem is None, (
            f"right without dropout, but not with dropout 0.5 ({problem}): translate under "
            f"chainer.using_config('train', False), which turns dropout off")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_max_length(submission):
    """With max_length 3 and 1, no translation is longer, and each matches the reference."""
    for max_length in (3, 1):
        problem = problem_at(submission, max_length)
        assert problem is None, f"with max_length={max_length}: {problem}"
