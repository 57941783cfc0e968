# MUTANT: the naive allreduce through rank 0 under the ring's name: right sum, wrong traffic
# EXPECT: right neighbour
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
    total = np.array(x, copy=True)
    if comm.rank == 0:
        buf = np.empty_like(total)
        for src in range(1, comm.size):
            comm.Recv(buf, source=src)
            total += buf
        for dst in range(1, comm.size):
            comm.Send(total, dest=dst)
    else:
        comm.Send(total, dest=0)
        comm.Recv(total, source=0)
    return total
    ### END SOLUTION
