# MUTANT: one allreduce per gradient array instead of one flat buffer
# EXPECT: one flat buffer
import numpy as np


def average_gradients(comm, grads):
    """Average a list of gradient arrays over all ranks with one allreduce on one flat buffer.

    Args:
        comm: an mpi4py communicator.
        grads: this rank's gradients, a list of numpy arrays (the same shapes on every rank).

    Returns:
        A list of new arrays: each the mean over ranks, with its gradient's shape and dtype.
    """
    ### BEGIN SOLUTION
    return [(allreduce_ring(comm, g) / comm.size).astype(g.dtype) for g in grads]
    ### END SOLUTION
