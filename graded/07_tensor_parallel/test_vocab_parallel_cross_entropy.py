"""Exercise 1 of lab 07_tensor_parallel: ``vocab_parallel_cross_entropy(comm, logits, targets,
vocab_start)``, each position's loss over the whole vocabulary from this rank's slice.

Observe half (every rank): the answer's losses for each drawn case (tplab.draw_cases), given
only this rank's slice. Check half (the grader): the same cases made again from the seed, the
losses against one process's, then the traffic the grader's MPI shim saw: allreduces only, at
most three of N numbers per call.
"""
import numpy as np
import pytest
from tplab import (
    EDGE_HINT,
    GROUPS_HINT,
    OVERFLOW_HINT,
    TARGET_HINT,
    as_array,
    close,
    draw_cases,
    edge_only,
    first_failure,
    groups,
    observable,
    reference_losses,
    traffic_problem,
)


def rank_parts(case, rank, top):
    """What rank ``rank`` holds: its sum of exp(logit - top) and its share of the target logit."""
    a, b = case.slice_of(rank)
    part = case.logits[:, a:b]
    column = case.targets - a
    mine = (column >= 0) & (column < b - a)
    picked = np.where(mine, part[np.arange(case.n), np.where(mine, column, 0)], 0.0)
    return np.exp(part - top[:, None]).sum(axis=1), picked


def hint(case, rank, got, want):
    """A sentence naming the likely cause when ``got`` is a known wrong answer, else None."""
    if not np.isfinite(got).all() and np.isfinite(want).all():
        return OVERFLOW_HINT
    a, b = case.slice_of(rank)
    ranks = range(case.size)
    top = case.logits.max(axis=1)
    sums, picks = zip(*(rank_parts(case, r, top) for r in ranks))
    own_top = case.logits[:, a:b].max(axis=1)
    own_sums = [rank_parts(case, r, case.logits[:, slice(*case.slice_of(r))].max(axis=1))[0]
                for r in ranks]
    total, target = sum(sums), sum(picks)
    wrong = {
        "every rank must subtract the same maximum, the largest logit of all ranks (an "
        "Allreduce with MPI.MAX): with each rank's own maximum, the ranks' sums of exponentials "
        "are in different units and do not add up": np.log(sum(own_sums)) + own_top - target,
        "the softmax's denominator covers only this rank's words: allreduce (SUM) each rank's "
        "sum of exponentials": np.log(sums[rank]) + top - target,
        "the target's logit is only on the rank whose slice holds the target: the others must "
        "add 0 and an allreduce (SUM) must give it to every rank":
            np.log(total) + top - picks[rank],
        "the loss is not a sum of each rank's losses over its own slice (a log of a sum is not a "
        "sum of logs): allreduce its parts (max, sum of exponentials, target logit), then "
        "combine them": sum(np.log(sums[r]) + top - picks[r] for r in ranks),
    }
    for sentence, value in wrong.items():
        if case.size > 1 and np.allclose(got, value, rtol=1e-7, atol=1e-8):
            return sentence
    bad = ~close(got, want)
    if edge_only(case, bad):
        return EDGE_HINT
    implied = (np.log(total) + top - got)[bad]  # the target logit that would give ``got``
    rows, extra = case.logits[bad], implied - case.logits[bad, case.targets[bad]]
    if all(np.isclose(i, 0) or np.isclose(row, i).any() or np.isclose(row, x).any()
           for i, x, row in zip(implied, extra, rows)):
        return TARGET_HINT
    return None


def check_case(case, rank, got):
    """None, or ``(message, hinted)`` for rank ``rank``'s result on ``case``."""
    a, b = case.slice_of(rank)
    want = reference_losses(case.logits, case.targets)
    got, problem = as_array(got, want.shape, "vocab_parallel_cross_entropy")
    if problem:
        return f"{problem}: one loss per position, not their mean or sum {case.describe()}", True
    if close(got, want).all():
        return None
    wrong = np.flatnonzero(~close(got, want))
    k = wrong[0]
    why = hint(case, rank, got, want)
    return ((f"{why + '. ' if why else ''}The losses differ from one process's at {len(wrong)} of "
            f"{case.n} positions (position {k}: got {got[k]:.6g}, expected {want[k]:.6g}; this "
            f"rank holds words {a}..{b - 1}) {case.describe()}"), why is not None)


def observe_losses(submission, comm, observe, cases):
    got = []
    for case in cases:
        a, b = case.slice_of(comm.rank)
        got.append(observable(submission.vocab_parallel_cross_entropy(
            comm, case.logits[:, a:b].copy(), case.targets.copy(), a)))
    observe(got=got)


def losses_problem(obs, run, cases, rank, after=""):
    message = first_failure(cases, lambda case, k: check_case(case, rank, obs["got"][k]))
    if message:
        return message + after
    problem = traffic_problem(run.traffic, [case.n for case in cases], 3)
    return f"the losses are right, but {problem}" if problem else None


@pytest.mark.points(4)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_losses_equal_one_process_with_three_allreduces_of_n(submission, comm, observe, seed):
    """Every rank returns one process's losses on drawn uneven slices, from <= 3 allreduces of N."""
    observe_losses(submission, comm, observe, draw_cases(seed, comm.size))


def check_losses_equal_one_process_with_three_allreduces_of_n(obs, run):
    return losses_problem(obs, run, draw_cases(run.seed, run.size), run.rank)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[4], timeout=60)
def test_two_groups_side_by_side(submission, comm, observe, seed):
    """Two groups of 2 ranks (0, 2 and 1, 3), each its own batch: only the comm given is used."""
    group, rank, size = groups(comm.rank, comm.size)
    sub = comm.Split(group, rank)
    try:
        observe_losses(submission, sub, observe, draw_cases(seed, size, group))
    finally:
        sub.Free()


def check_two_groups_side_by_side(obs, run):
    group, rank, size = groups(run.rank, run.size)
    return losses_problem(obs, run, draw_cases(run.seed, size, group), rank, GROUPS_HINT)
