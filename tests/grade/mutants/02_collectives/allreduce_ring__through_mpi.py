# MUTANT: delegates to MPI's own allreduce on COMM_WORLD, bypassing comm
# EXPECT: sent 0 messages
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
    from mpi4py import MPI

    return MPI.COMM_WORLD.allreduce(np.array(x, copy=True))
    ### END SOLUTION
