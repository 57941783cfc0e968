"""Dataset scattering: give each rank its own share of the samples.

    train = scatter_dataset(train if comm.rank == 0 else None, comm, shuffle=True, seed=0)
    idx = scatter_index(len(corpus), comm, shuffle=True, seed=0)   # nothing is sent

Two ways to share ``n`` samples among ``size`` ranks, both over an order that is
``RandomState(seed).permutation(n)`` when shuffling and ``0, 1, ..., n - 1`` otherwise:

- exact (``equal_length=False``): the order is cut into ``size`` contiguous shards whose lengths
  differ by at most one (the first ``n % size`` shards get the extra sample). Every sample is
  used exactly once: what evaluation needs.
- equal length (``equal_length=True``): every shard has ``ceil(n / size)`` samples, as ChainerMN
  does by default, so every rank runs the same number of iterations per epoch (a rank that ran
  out of batches would leave the others waiting in the allreduce). Shard ``r`` is its exact
  shard continued along the order, wrapping past the end: a shard one sample short repeats the
  first sample of the next shard, and the last shard repeats ``order[0]``. When ``n < size``
  the empty shards all repeat ``order[0]``. Which samples repeat is therefore fixed by the
  seed, and an epoch holds at most ``size - 1`` repeats.

``scatter_dataset`` sends each rank only its shard (the root pickles one shard per rank);
ChainerMN's ``scatter_dataset`` broadcasts the whole dataset to every rank instead, then each
rank keeps a slice. ``scatter_index`` sends nothing: every rank computes the same permutation
from the seed and takes its slice, for corpora too big to send (each rank reads its own lines).

Cost, once before training, for ``N`` samples on ``p`` ranks:

- ``scatter_dataset``: ``p - 1`` pickled messages from the root, one per other rank, each its
  shard of about ``N / p`` samples: ``(p - 1) / p`` of the dataset leaves the root and each rank
  receives only what it keeps (ChainerMN's broadcast moves all ``N`` samples to every rank).
- ``scatter_index`` and ``scatter_subdataset``: no message at all; one broadcast of one int
  when ``shuffle`` is asked for without a ``seed``.

Lesson: "Sharing the data".
"""
import chainer
import numpy as np

from dlhack.parallel.allreduce_ring import chunk_bounds  # the same even split as the ring's


def permutation(n, shuffle=False, seed=None):
    """The order samples are dealt in: ``RandomState(seed).permutation(n)`` or ``arange(n)``."""
    return np.random.RandomState(seed).permutation(n) if shuffle else np.arange(n)


def shard_indices(n, size, rank, order=None, equal_length=False):
    """Indices (into the dataset) of rank ``rank``'s shard; pure arithmetic, no MPI.

    Args:
        n: number of samples.
        size: number of ranks.
        rank: which shard.
        order: the dealing order (length ``n``); default ``arange(n)``.
        equal_length: pad short shards to ``ceil(n / size)`` (see the module docstring).
    """
    order = np.arange(n) if order is None else np.asarray(order)
    begin, end = chunk_bounds(n, size)[rank]
    if not equal_length:
        return order[begin:end]
    length = -(-n // size)  # ceil(n / size)
    return order[(begin + np.arange(length)) % max(n, 1)]  # wraps past the end of the order


def scatter_index(n, comm, shuffle=False, seed=None, equal_length=False):
    """This rank's sample indices, computed locally (one broadcast only if ``seed`` is None).

    Args:
        n: number of samples, the same on every rank.
        comm: our communicator or ChainerMN's (uses ``rank``, ``size`` and ``bcast_obj``).
        shuffle: deal the samples in a random order.
        seed: seed of that order; every rank must pass the same. ``None``: rank 0 draws one
            and broadcasts it, so the ranks still agree.
        equal_length: every rank gets ``ceil(n / size)`` indices, repeating a few.

    Returns:
        A 1-D integer array of indices into the dataset.
    """
    if shuffle and seed is None:
        drawn = int(np.random.SeedSequence().generate_state(1)[0]) if comm.rank == 0 else None
        seed = comm.bcast_obj(drawn, root=0)
    return shard_indices(n, comm.size, comm.rank, permutation(n, shuffle, seed), equal_length)


def scatter_dataset(dataset, comm, root=0, shuffle=False, seed=None, equal_length=False):
    """Send every rank its shard of the root's ``dataset`` (other ranks may pass ``None``).

    Args:
        dataset: anything with ``len`` and ``[i]`` on the root (a list, a ``TupleDataset``...).
        comm: our communicator or ChainerMN's (uses ``rank``, ``size``, ``send_obj``,
            ``recv_obj``).
        root: the rank that holds the dataset.
        shuffle: deal the samples in a random order, ``RandomState(seed).permutation``.
        seed: seed of that order (used on the root only).
        equal_length: every rank gets ``ceil(n / size)`` samples, repeating a few.

    Returns:
        This rank's samples, as a list.
    """
    if comm.rank != root:
        return comm.recv_obj(source=root)
    n = len(dataset)
    order = permutation(n, shuffle, seed)
    mine = None
    for dest in range(comm.size):
        shard = [dataset[i] for i in shard_indices(n, comm.size, dest, order, equal_length)]
        if dest == root:
            mine = shard
        else:
            comm.send_obj(shard, dest=dest)  # pickled: one message per rank
    return mine


def scatter_subdataset(dataset, comm, shuffle=False, seed=None, equal_length=False):
    """This rank's view of a dataset every rank already holds, as a ``SubDataset``; no data moves.

    The same shards as ``scatter_dataset`` given the same ``seed`` (and ``root=0``).
    """
    n = len(dataset)
    mine = scatter_index(n, comm, shuffle, seed, equal_length)
    # SubDataset wants an order as long as the dataset: ours first, then unused indices.
    rest = np.setdiff1d(np.arange(n), mine)[:n - len(mine)]
    return chainer.datasets.SubDataset(dataset, 0, len(mine), np.concatenate([mine, rest]))
