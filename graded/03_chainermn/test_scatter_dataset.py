"""Exercise 3 of lab 03: ``scatter_dataset(dataset, comm, shuffle=False, seed=None)``.

Only rank 0 passes the dataset (the others pass None). Samples carry their index in their first
array, so the test can tell which samples each rank got.
"""
import numpy as np
import pytest
from mnlab import LabComm, shard_problem


def make_dataset(n):
    """``n`` samples ``(src, tgt)`` like the translator's: sample i has src [i, i, i]."""
    return [(np.full(3, i, np.int32), np.arange(i % 4 + 1, dtype=np.int32)) for i in range(n)]


def sample_ids(shard, rank, n):
    """The index of each sample in ``shard``, or a failure saying why a sample is not one."""
    try:
        length = len(shard)
    except TypeError:
        pytest.fail(f"rank {rank} got a {type(shard).__name__} back, not a list of samples",
                    pytrace=False)
    ids = []
    for k in range(length):
        sample = shard[k]
        if isinstance(sample, (int, np.integer)):
            pytest.fail(f"rank {rank}'s shard holds {sample}, an index: return the samples "
                        f"themselves (dataset[i]), which only rank 0 has", pytrace=False)
        try:
            src, tgt = sample
            i = int(src[0])
            same = np.array_equal(src, np.full(3, i)) and np.array_equal(
                tgt, np.arange(i % 4 + 1)) and 0 <= i < n
        except Exception:  # noqa: BLE001 - anything that is not a (src, tgt) pair
            same = False
        if not same:
            pytest.fail(f"rank {rank}'s shard holds {sample!r}, which is not one of the dataset's "
                        f"(src, tgt) samples", pytrace=False)
        ids.append(i)
    return ids


def scatter(submission, comm, n, **kwargs):
    """Every rank's sample ids, on every rank."""
    lab = LabComm(comm)
    dataset = make_dataset(n) if comm.rank == 0 else None
    shard = submission.scatter_dataset(dataset, lab, **kwargs)
    return comm.allgather(sample_ids(shard, comm.rank, n))


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_every_sample_exactly_once(submission, comm):
    """10 samples, then 3: every sample on exactly one rank, shard lengths within one."""
    for n in (10, 3):
        shards = scatter(submission, comm, n)
        problem = shard_problem(list(range(n)), shards, comm.size)
        assert problem is None, f"with {n} samples, {problem}"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3], timeout=60)
def test_shuffle_with_seed(submission, comm):
    """shuffle=True deals in a random order that the seed fixes; still an exact partition."""
    n = 30
    plain = scatter(submission, comm, n)
    first = scatter(submission, comm, n, shuffle=True, seed=5)
    again = scatter(submission, comm, n, shuffle=True, seed=5)
    other = scatter(submission, comm, n, shuffle=True, seed=6)
    problem = shard_problem(list(range(n)), first, comm.size)
    assert problem is None, f"with shuffle=True, {problem}"
    assert first != plain, (
        "with shuffle=True every rank got the same samples as without: deal the samples in the "
        "order np.random.RandomState(seed).permutation(len(dataset))")
    assert first == again, (
        "two calls with shuffle=True, seed=5 gave different shards: draw the order from "
        "np.random.RandomState(seed), not from the global random state")
    assert first != other, "seed=5 and seed=6 gave the same shards: use the seed for the order"
