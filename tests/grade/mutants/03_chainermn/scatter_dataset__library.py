# MUTANT: delegates to the course library's scatter_dataset
# EXPECT: course library's version
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
    from dlhack.parallel import scatter_dataset as library

    return library(dataset, comm, shuffle=shuffle, seed=seed)
    ### END SOLUTION
