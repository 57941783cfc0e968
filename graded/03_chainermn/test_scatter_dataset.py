"""Exercise 3 of lab 03: ``scatter_dataset(dataset, comm, shuffle=False, seed=None)``.

Only rank 0 passes the dataset (the others pass None). Samples carry their index in their first
array, so the grader can tell which samples each rank got. Sizes and seeds come from the grader's
draw for the launch beside the fixed ones (the drawn case is printed when it fails): every
sample on exactly one rank, the shards read in rank order are the dealing order cut into
contiguous pieces, and rank 0's dataset is left as it was. The ranks observe their shards; the
grader decides.
"""
import numpy as np
import pytest
from mnlab import LabComm, order_problem, shard_problem


def make_dataset(n):
    """``n`` samples ``(src, tgt)`` like the translator's: sample i has src [i, i, i]."""
    return [(np.full(3, i, np.int32), np.arange(i % 4 + 1, dtype=np.int32)) for i in range(n)]


def sample_ids(shard, rank, n):
    """``(ids, None)``: the index of each sample in ``shard``; or ``(None, why not)``."""
    if not isinstance(shard, list):
        kind = getattr(shard, "type_name", type(shard).__name__)  # a Foreign: what it was
        return None, f"rank {rank} got a {kind} back, not a list of samples"
    ids = []
    for sample in shard:
        if isinstance(sample, (int, np.integer)) or (
                isinstance(sample, np.ndarray) and sample.ndim == 0):
            return None, (f"rank {rank}'s shard holds {sample}, an index: return the samples "
                          f"themselves (dataset[i]), which only rank 0 has")
        try:
            src, tgt = sample
            i = int(src[0])
            same = np.array_equal(src, np.full(3, i)) and np.array_equal(
                tgt, np.arange(i % 4 + 1)) and 0 <= i < n
        except Exception:  # noqa: BLE001 - anything that is not a (src, tgt) pair
            same = False
        if not same:
            return None, (f"rank {rank}'s shard holds {str(sample)[:80]}, which is not one of "
                          f"the dataset's (src, tgt) samples")
        ids.append(i)
    return ids, None


def scatter(submission, comm, n, **kwargs):
    """This rank's shard, as observed; and rank 0's dataset (its sample ids) after the call."""
    lab = LabComm(comm)
    dataset = make_dataset(n) if comm.rank == 0 else None
    shard = submission.scatter_dataset(dataset, lab, **kwargs)
    after = [int(src[0]) for src, _ in dataset] if comm.rank == 0 else None
    try:
        shard = [list(sample) if isinstance(sample, tuple) else sample for sample in shard]
    except TypeError:
        pass  # not iterable: observed as it is, the grader says so
    return {"shard": shard, "dataset_after": after}


def shards_problem(run, key, n, order, case):
    """``(problem, shards)``: the sample ids of every rank's observed shard ``key``, and None
    when they are ``order`` (None: any order) cut evenly, else a sentence saying why not."""
    shards = []
    for rank in range(run.size):
        try:
            seen = run.observed(rank)[key]
        except Exception:  # noqa: BLE001 - that rank failed on its own, and says why
            return None, None
        if rank == 0 and seen["dataset_after"] != list(range(n)):
            return (f"{case}, scatter_dataset reordered or changed rank 0's dataset, the "
                    f"caller's list: leave it as it is and deal an order of indices instead "
                    f"(np.random.RandomState(seed).permutation(n))"), None
        ids, why = sample_ids(seen["shard"], rank, n)
        if why:
            return f"{case}: {why}", None
        shards.append(ids)
    problem = shard_problem(list(range(n)), shards, run.size)
    if problem is None and order is not None:
        problem = order_problem(order, shards)
    return (f"{case}, {problem}" if problem else None), shards


def drawn_count(seed, size):
    return 1 + seed % (6 * size + 3)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_every_sample_exactly_once(submission, comm, observe, seed):
    """10 samples, 3, and a drawn count: every sample on one rank, contiguous even pieces."""
    for n in (10, 3, drawn_count(seed, comm.size)):
        observe(**{f"n{n}": scatter(submission, comm, n)})


def check_every_sample_exactly_once(obs, run):
    if run.rank != 0:  # rank 0's check reads every rank's shard
        return None
    for n in (10, 3, drawn_count(run.seed, run.size)):
        case = f"with {n} samples on {run.size} rank{'s' if run.size > 1 else ''}"
        problem, _ = shards_problem(run, f"n{n}", n, list(range(n)), case)
        if problem:
            return problem
    return None


def shuffle_case(seed, size):
    """``(n, shuffle seed)`` of the grader's draw."""
    return 2 * size + 1 + seed % (39 - 2 * size), seed % 2 ** 31


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=60)
def test_shuffle_with_seed(submission, comm, observe, seed):
    """shuffle=True deals in the order np.random.RandomState(seed).permutation(n); still exact."""
    n, shuffle_seed = shuffle_case(seed, comm.size)
    observe(first=scatter(submission, comm, n, shuffle=True, seed=shuffle_seed),
            again=scatter(submission, comm, n, shuffle=True, seed=shuffle_seed))


def check_shuffle_with_seed(obs, run):
    if run.rank != 0:
        return None
    n, shuffle_seed = shuffle_case(run.seed, run.size)
    case = f"with {n} samples, shuffle=True, seed={shuffle_seed} (drawn) at {run.size} ranks"
    problem, first = shards_problem(run, "first", n, None, case)
    if problem or first is None:
        return problem
    _, again = shards_problem(run, "again", n, None, case)
    if again != first:
        return (f"{case}: two calls gave different shards: draw the order from "
                f"np.random.RandomState(seed), not from numpy's global random state")
    if [i for shard in first for i in shard] == list(range(n)):
        return (f"{case}: the ranks got the samples in the order 0, 1, 2...: deal them in the "
                f"order np.random.RandomState(seed).permutation(len(dataset))")
    problem = order_problem(np.random.RandomState(shuffle_seed).permutation(n), first)
    if problem:
        return (f"{case}, {problem} (the dealing order is np.random.RandomState(seed)"
                f".permutation(n), the same seed giving the same shards on every run)")
    return None
