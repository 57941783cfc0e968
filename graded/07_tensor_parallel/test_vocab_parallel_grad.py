"""Exercise 2 of lab 07_tensor_parallel: ``vocab_parallel_grad(comm, logits, targets,
vocab_start)``, the gradient of the mean loss on this rank's columns.

As exercise 1: the observe half hands the answer this rank's slice of each drawn case; the
check compares it with this rank's columns of one process's gradient, and the traffic with
forward's at most (three allreduces of N numbers per call).
"""
import numpy as np
import pytest
from tplab import (
    EDGE_HINT,
    OVERFLOW_HINT,
    as_array,
    close,
    draw_cases,
    edge_only,
    first_failure,
    observable,
    reference_grad,
    traffic_problem,
)

ONE_HOT_HINT = ("the one-hot term is wrong: subtract 1 (before dividing by N) at column "
                "t - vocab_start, and only on the rank whose slice holds t "
                "(0 <= t - vocab_start < V_r)")


def hint(case, rank, got, want):
    """A sentence naming the likely cause when ``got`` is a known wrong answer, else None."""
    if not np.isfinite(got).all() and np.isfinite(want).all():
        return OVERFLOW_HINT
    a, b = case.slice_of(rank)
    n = case.n
    part = case.logits[:, a:b]
    top = case.logits.max(axis=1, keepdims=True)
    exp = np.exp(part - top)
    minus_onehot = want * n - exp / np.exp(case.logits - top).sum(axis=1, keepdims=True)
    own = np.exp(part - part.max(axis=1, keepdims=True))
    every = sum(np.exp(case.logits[:, slice(*case.slice_of(r))]
                       - case.logits[:, slice(*case.slice_of(r))].max(axis=1, keepdims=True)).sum(
                           axis=1, keepdims=True) for r in range(case.size))
    wrong = {
        f"N times too large: that is the gradient of the sum of the losses; the loss is their "
        f"mean over the N={n} positions, so divide by N": want * n,
        f"divided by N x ranks: the mean is over the N={n} positions, which every rank holds "
        f"whole (only the words are split)": want / case.size,
        "the softmax's denominator covers only this rank's words: allreduce (SUM) each rank's "
        "sum of exponentials": (exp / exp.sum(axis=1, keepdims=True) + minus_onehot) / n,
        "every rank must subtract the same maximum, the largest logit of all ranks (an "
        "Allreduce with MPI.MAX), before the sums of exponentials are added":
            (own / every + minus_onehot) / n,
    }
    for sentence, value in wrong.items():
        if (case.size > 1 or "mean" in sentence) and np.allclose(got, value, rtol=1e-7, atol=1e-10):
            return sentence
    bad = ~close(got, want)
    if edge_only(case, bad.any(axis=1)):
        return EDGE_HINT
    if np.allclose(np.abs(got - want)[bad], 1.0 / n, rtol=1e-6):
        return ONE_HOT_HINT
    return None


def check_case(case, rank, got):
    """None, or ``(message, hinted)`` for rank ``rank``'s result on ``case``."""
    a, b = case.slice_of(rank)
    want = reference_grad(case.logits, case.targets)[:, a:b]
    got, problem = as_array(got, want.shape, "vocab_parallel_grad")
    if problem:
        return f"{problem}: (N, V_r), this rank's columns only {case.describe()}", True
    bad = ~close(got, want)
    if not bad.any():
        return None
    row, col = np.argwhere(bad)[0]
    why = hint(case, rank, got, want)
    return ((f"{why + '. ' if why else ''}The gradient differs from this rank's columns of one "
            f"process's at {int(bad.sum())} of {bad.size} entries (position {row}, word "
            f"{a + col}: got {got[row, col]:.6g}, expected {want[row, col]:.6g}; this rank holds "
            f"words {a}..{b - 1}) {case.describe()}"), why is not None)


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_gradient_equals_one_process_on_this_ranks_columns(submission, comm, observe, seed):
    """Every rank returns its columns of one process's gradient of the mean loss, sending no
    more than forward does."""
    got = []
    for case in draw_cases(seed, comm.size):
        a, b = case.slice_of(comm.rank)
        got.append(observable(submission.vocab_parallel_grad(
            comm, case.logits[:, a:b].copy(), case.targets.copy(), a)))
    observe(got=got)


def check_gradient_equals_one_process_on_this_ranks_columns(obs, run):
    cases = draw_cases(run.seed, run.size)
    message = first_failure(cases, lambda case, k: check_case(case, run.rank, obs["got"][k]))
    if message:
        return message
    problem = traffic_problem(run.traffic, [case.n for case in cases], 3)
    return f"the gradient is right, but {problem}" if problem else None
