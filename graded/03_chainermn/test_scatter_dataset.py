"""Exercise 3 of lab 03: ``scatter_dataset(dataset, comm, shuffle=False, seed=None)``.

Only rank 0 passes the dataset (the others pass None). Samples carry their index in their first
array, so the test can tell which samples each rank got. Sizes and seeds are drawn afresh at each
grading beside the fixed ones (the drawn case is printed when it fails): every sample on exactly
one rank, the shards read in rank order are the dealing order cut into contiguous pieces, and
rank 0's dataset is left as it was.
"""
import numpy as np
import pytest
from mnlab import LabComm, drawn, order_problem, shard_problem


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
    """Every rank's sample ids, on every rank; fails when rank 0's dataset was changed."""
    lab = LabComm(comm)
    dataset = make_dataset(n) if comm.rank == 0 else None
    shard = submission.scatter_dataset(dataset, lab, **kwargs)
    changed = comm.rank == 0 and [int(src[0]) for src, _ in dataset] != list(range(n))
    if comm.bcast(changed, root=0):
        pytest.fail(f"with {n} samples and {kwargs or 'no options'}, scatter_dataset reordered "
                    f"or changed rank 0's dataset, the caller's list: leave it as it is and deal "
                    f"an order of indices instead (np.random.RandomState(seed).permutation(n))",
                    pytrace=False)
    return comm.allgather(sample_ids(shard, comm.rank, n))


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_every_sample_exactly_once(submission, comm):
    """10 samples, 3, and a drawn count: every sample on one rank, contiguous even pieces."""
    size = comm.size
    for n in (10, 3, drawn(comm, 1, 6 * size + 4)):
        shards = scatter(submission, comm, n)
        case = f"with {n} samples on {size} rank{'s' if size > 1 else ''}"
        problem = shard_problem(list(range(n)), shards, size) or order_problem(range(n), shards)
        assert problem is None, f"{case}, {problem}"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=60)
def test_shuffle_with_seed(submission, comm):
    """shuffle=True deals in the order np.random.RandomState(seed).permutation(n); still exact."""
    n, seed = drawn(comm, 2 * comm.size + 1, 40), drawn(comm, 0, 2 ** 31)
    case = f"with {n} samples, shuffle=True, seed={seed} (drawn) at {comm.size} ranks"
    first = scatter(submission, comm, n, shuffle=True, seed=seed)
    again = scatter(submission, comm, n, shuffle=True, seed=seed)
    problem = shard_problem(list(range(n)), first, comm.size)
    assert problem is None, f"{case}, {problem}"
    assert first == again, (
        f"{case}: two calls gave different shards: draw the order from "
        f"np.random.RandomState(seed), not from numpy's global random state")
    order = np.random.RandomState(seed).permutation(n)
    if [i for shard in first for i in shard] == list(range(n)):
        pytest.fail(f"{case}: the ranks got the samples in the order 0, 1, 2...: deal them in the "
                    f"order np.random.RandomState(seed).permutation(len(dataset))", pytrace=False)
    problem = order_problem(order, first)
    assert problem is None, (
        f"{case}, {problem} (the dealing order is np.random.RandomState(seed).permutation(n), "
        f"the same seed giving the same shards on every run)")
