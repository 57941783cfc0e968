# MUTANT: delegates to the course library's ring allreduce
# EXPECT: write it yourself
# FAST
import numpy as np


def allreduce_ring(comm, x):
    """Sum ``x`` over all ranks by reduce-scatter then allgather on a ring (bandwidth-optimal).

    Args:
        comm: an mpi4py communicator.
        x: this rank's numpy array; the same shape and dtype on every rank. Any length: it need
            not divide by the rank count, and may be shorter than it.

    Returns:
        A new array, the elementwise sum of every rank's ``x``, on every rank.
    """
    ### BEGIN SOLUTION
    from dlhack.parallel.allreduce_ring import allreduce

    return allreduce(comm, np.array(x, copy=True))
    ### END SOLUTION
