# MUTANT: packs in float64 and never casts back: forgets the dtype
# EXPECT: dtype
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
    flat = np.concatenate([np.ravel(g).astype(np.float64) for g in grads])
    mean = allreduce_ring(comm, flat) / comm.size
    out, start = [], 0
    for g in grads:
        out.append(mean[start:start + g.size].reshape(g.shape))
        start += g.size
    return out
    ### END SOLUTION
