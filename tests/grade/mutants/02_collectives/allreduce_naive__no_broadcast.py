# MUTANT: rank 0 sums but never sends the sum back; the others keep their own array
# EXPECT: sends the sum once to every other rank
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
    total = np.array(x, copy=True)
    if comm.rank == 0:
        buf = np.empty_like(total)
        for src in range(1, comm.size):
            comm.Recv(buf, source=src)
            total += buf
    else:
        comm.Send(total, dest=0)
    return total
    ### END SOLUTION
