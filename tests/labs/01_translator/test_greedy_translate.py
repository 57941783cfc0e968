"""Exercise 2 of lab 01: ``greedy_translate(model, xs, max_length)``, one token at a time.

The reference is the library's own ``model.translate`` on the same seeded weights.
"""
import numpy as np
import pytest
from translator import translation_model, translation_problem


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_matches_translate(submission):
    """Seven sentences, some stopping at once, some part way, some running to max_length."""
    model, xs = translation_model(max_length=10)
    want = model.translate(xs, max_length=10)
    got = submission.greedy_translate(model, xs, max_length=10)
    problem = translation_problem(got, want, 10)
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_dropout_is_off(submission):
    """A model with dropout 0.5 translates the same way every time, as model.translate does."""
    model, xs = translation_model(max_length=8, dropout=0.5)
    want = model.translate(xs, max_length=8)
    for attempt in range(2):
        np.random.seed(attempt)  # dropout masks come from numpy's RNG
        got = submission.greedy_translate(model, xs, max_length=8)
        problem = translation_problem(got, want, 8)
        assert problem is None, problem + (
            ". This model has dropout: translate under chainer.using_config('train', False), "
            "which turns dropout off (and no_backprop_mode, which saves memory)")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_max_length(submission):
    """With max_length 3 (and 1), no translation is longer, and each matches the reference."""
    model, xs = translation_model(max_length=10)
    for max_length in (3, 1):
        want = model.translate(xs, max_length=max_length)
        got = submission.greedy_translate(model, xs, max_length=max_length)
        problem = translation_problem(got, want, max_length)
        assert problem is None, f"with max_length={max_length}: {problem}"
