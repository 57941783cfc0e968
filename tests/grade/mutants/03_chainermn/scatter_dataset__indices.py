# MUTANT: scatters the indices, not the samples
# EXPECT: an index
import numpy as np


def scatter_dataset(dataset, comm, shuffle=False, seed=None):
    """Give every rank its shard of rank 0's ``dataset``: each sample to exactly one rank.

    Args:
        dataset: a list of samples on rank 0 (anything with ``len`` and ``[i]``); ``None`` on
            the other ranks.
        comm: has ``rank``, ``size`` and ``mpi_comm`` (an mpi4py communicator).
        shuffle: deal the samples in the order ``np.random.RandomState(seed).permutation(n)``
            instead of ``0, 1, ..., n - 1``.
        seed: the seed of that order.

    Returns:
        This rank's samples, a list; the shards' lengths differ by at most one.
    """
    ### BEGIN SOLUTION
    pieces = None
    if comm.rank == 0:
        n = len(dataset)
        order = np.random.RandomState(seed).permutation(n) if shuffle else np.arange(n)
        pieces = [list(piece) for piece in np.array_split(order, comm.size)]
    return comm.mpi_comm.scatter(pieces, root=0)
    ### END SOLUTION
