"""Exercise 3 of lab 06: ``global_mean(comm, values)``: the mean over every rank's values, when
shards differ in size and some are empty. The ranks observe what it returned; the grader
recomputes the shards and the mean."""
import numpy as np
import pytest
from lab06 import shards, uneven_shards
from labtools import drawn

VALUES = [3.0, 5.0, 10.0]


def as_number(got):
    if isinstance(got, (np.floating, np.integer)):
        return float(got)
    return got if got is None or isinstance(got, (int, float)) else repr(got)


def problem_with(got, shard_of, parts, everything):
    """None, or what is wrong with ``got`` on a rank whose shard is ``shard_of``."""
    want = float(np.mean(everything))
    if got is None:
        return "global_mean returned None: did it forget to `return`?"
    if not isinstance(got, (int, float)):
        return f"global_mean returned {got}, not a number"
    if np.isnan(got):
        return (f"got nan: an empty shard ({len(shard_of)} values here) must not divide by "
                f"zero; count its values as 0")
    if abs(got - want) <= 1e-9 * max(1.0, abs(want)):
        return None
    means = [float(np.mean(s)) for s in parts if len(s)]
    hint = ""
    if len(shard_of) and abs(got - float(np.mean(shard_of))) < 1e-9:
        hint = (": that is this rank's own mean; the mean is over every rank's values "
                "together, the same on every rank")
    elif any(got == round(want, d) for d in range(6)):
        hint = ": that is the mean rounded; return it as it is"
    elif abs(got - float(np.mean(means))) < 1e-9:
        hint = (": that is the mean of the ranks' means, which weighs a value of a small "
                "shard more; add up sums and counts over the ranks, then divide once")
    return f"got {got}, expected {want}{hint}"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 4], timeout=15)
def test_three_values_on_up_to_four_ranks(submission, comm, observe):
    """3 values: at 2 ranks the shards hold 2 and 1, at 4 ranks one shard is empty."""
    observe(got=as_number(submission.global_mean(comm, list(shards(VALUES, comm.size)[comm.rank]))))


def check_three_values_on_up_to_four_ranks(obs, run):
    parts = shards(VALUES, run.size)
    return problem_with(obs["got"], parts[run.rank], parts, VALUES)


def drawn_values(seed, size):
    """Values of any sign and size, not round, dealt to drawn ranks (some may get none)."""
    rng = np.random.RandomState(seed)
    values = [float(v) for v in rng.standard_normal(rng.randint(1, 40)) * 10 ** rng.uniform(-3, 3)]
    owner = rng.randint(0, size, len(values))
    return values, [[v for v, r in zip(values, owner) if r == rank] for rank in range(size)]


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=15)
def test_very_uneven_shards(submission, comm, observe, seed):
    """20 values in shards of very different sizes (rank 0's is empty), then drawn values (any
    sign and size, not round) in drawn shards."""
    values = [float(v) for v in np.random.RandomState(0).randint(0, 100, 20)]
    first = as_number(submission.global_mean(comm, list(uneven_shards(values, comm.size)[comm.rank])))
    _, parts = drawn_values(seed, comm.size)
    observe(first=first, drawn=as_number(submission.global_mean(comm, list(parts[comm.rank]))))


def check_very_uneven_shards(obs, run):
    values = [float(v) for v in np.random.RandomState(0).randint(0, 100, 20)]
    parts = uneven_shards(values, run.size)
    problem = problem_with(obs["first"], parts[run.rank], parts, values)
    if problem:
        return problem
    values, parts = drawn_values(run.seed, run.size)
    problem = problem_with(obs["drawn"], parts[run.rank], parts, values)
    if problem:
        return (f"{problem} ({len(values)} values, shards of {[len(p) for p in parts]})"
                + drawn(run.seed))
    return None
