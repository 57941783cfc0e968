# MUTANT: passes the whole array around the ring instead of chunks
# EXPECT: never the whole array
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
    rank, size = comm.rank, comm.size
    total = np.array(x, copy=True)
    passing = total.copy()
    right, left = (rank + 1) % size, (rank - 1) % size
    for step in range(size - 1):
        buf = np.empty_like(passing)
        comm.Sendrecv(passing, dest=right, recvbuf=buf, source=left)
        total += buf
        passing = buf
    return total
    ### END SOLUTION
