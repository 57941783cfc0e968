"""Exercise 2 of lab 01: ``greedy_translate(model, xs, max_length)``, one token at a time.

The ranks observe the answer's translations, made with a model whose ``translate`` (and
whole-sequence decoder) are switched off; the grader's check compares them with the library's
own ``model.translate`` on a twin with the same seeded weights.
"""
import numpy as np
import pytest
from translator import translation_model, translation_problem, translations_observed


def translate(submission, max_length, dropout=0.0):
    """The answer's translations (translations_observed) on the seeded batch."""
    _, model, xs = translation_model(max_length=10, dropout=dropout)
    return translations_observed(submission.greedy_translate(model, xs, max_length=max_length))


def problem_at(got, max_length, dropout=0.0, advice=True):
    """What is wrong with the translations ``got`` at ``max_length`` (None if nothing)."""
    reference, _, xs = translation_model(max_length=10, dropout=dropout)
    return translation_problem(got, reference.translate(xs, max_length=max_length), max_length,
                               advice)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_matches_translate(submission, observe):
    """Seven sentences: some stop at <eos> after a few tokens, some run to max_length."""
    observe(got=translate(submission, 10))


def check_matches_translate(obs, run):
    return problem_at(obs["got"], 10)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_dropout_is_off(submission, observe):
    """A model with dropout 0.5 translates the same way every time, as model.translate does."""
    observe(plain=translate(submission, 10))
    for attempt in range(2):
        np.random.seed(attempt)  # dropout masks come from numpy's RNG
        observe(**{f"dropout{attempt}": translate(submission, 10, dropout=0.5)})


def check_dropout_is_off(obs, run):
    problem = problem_at(obs["plain"], 10)
    if problem is not None:
        return f"without dropout already: {problem}"
    for attempt in range(2):
        problem = problem_at(obs[f"dropout{attempt}"], 10, dropout=0.5, advice=False)
        if problem is not None:
            return (f"right without dropout, but not with dropout 0.5 ({problem}): translate "
                    f"under chainer.using_config('train', False), which turns dropout off")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_max_length(submission, observe):
    """With max_length 3 and 1, no translation is longer, and each matches the reference."""
    observe(**{f"max{n}": translate(submission, n) for n in (3, 1)})


def check_max_length(obs, run):
    for max_length in (3, 1):
        problem = problem_at(obs[f"max{max_length}"], max_length)
        if problem is not None:
            return f"with max_length={max_length}: {problem}"
    return None
