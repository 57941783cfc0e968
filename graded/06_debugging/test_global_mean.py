"""Exercise 3 of lab 06: ``global_mean(comm, values)``: the mean over every rank's values, when
shards differ in size and some are empty."""
import numpy as np
import pytest
from lab06 import shards, uneven_shards
from labtools import draw_seed, drawn

VALUES = [3.0, 5.0, 10.0]


def check(submission, comm, shard, everything):
    got = submission.global_mean(comm, list(shard))
    means = comm.allgather(float(np.mean(shard)) if len(shard) else None)
    want = float(np.mean(everything))
    assert got is not None, "global_mean returned None: did it forget to `return`?"
    if np.isnan(got):
        pytest.fail(f"got nan: an empty shard ({len(shard)} values here) must "
                    f"not divide by zero; count its values as 0", pytrace=False)
    if abs(got - want) > 1e-9 * max(1.0, abs(want)):
        mean_of_means = float(np.mean([m for m in means if m is not None]))
        hint = ""
        if len(shard) and abs(got - float(np.mean(shard))) < 1e-9:
            hint = (": that is this rank's own mean; the mean is over every rank's values "
                    "together, the same on every rank")
        elif any(got == round(want, d) for d in range(6)):
            hint = ": that is the mean rounded; return it as it is"
        elif abs(got - mean_of_means) < 1e-9:
            hint = (": that is the mean of the ranks' means, which weighs a value of a small "
                    "shard more; add up sums and counts over the ranks, then divide once")
        pytest.fail(f"got {got}, expected {want}{hint}", pytrace=False)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 4], timeout=15)
def test_three_values_on_up_to_four_ranks(submission, comm):
    """3 values: at 2 ranks the shards hold 2 and 1, at 4 ranks one shard is empty."""
    check(submission, comm, shards(VALUES, comm.size)[comm.rank], VALUES)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=15)
def test_very_uneven_shards(submission, comm):
    """20 values in shards of very different sizes (rank 0's is empty), then drawn values (any
    sign and size, not round) in drawn shards."""
    values = [float(v) for v in np.random.RandomState(0).randint(0, 100, 20)]
    check(submission, comm, uneven_shards(values, comm.size)[comm.rank], values)
    seed = draw_seed(comm)
    rng = np.random.RandomState(seed)
    values = [float(v) for v in rng.standard_normal(rng.randint(1, 40)) * 10 ** rng.uniform(-3, 3)]
    owner = rng.randint(0, comm.size, len(values))  # some ranks may get none
    try:
        check(submission, comm, [v for v, r in zip(values, owner) if r == comm.rank], values)
    except pytest.fail.Exception as err:
        pytest.fail(f"{err.msg} ({len(values)} values, shards of "
                    f"{np.bincount(owner, minlength=comm.size).tolist()}){drawn(seed)}",
                    pytrace=False)
