# MUTANT: delegates to MPI's own allreduce on COMM_WORLD, bypassing comm
# EXPECT: in the naive allreduce
# FAST
import numpy as np


def allreduce_naive(comm, x):
    """Sum ``x`` over all ranks through rank 0 (naive: rank 0 carries all the traffic).

    Args:
        comm: an mpi4py communicator.
        x: this rank's numpy array; the same shape and dtype on every rank.

    Returns:
        A new array, the elementwise sum of every rank's ``x``, on every rank.
    """
    ### BEGIN SOLUTION
    from mpi4py import MPI

    return MPI.COMM_WORLD.allreduce(np.array(x, copy=True))
    ### END SOLUTION
