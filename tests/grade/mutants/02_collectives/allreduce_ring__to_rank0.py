# MUTANT: a 'ring' that sends every chunk to rank 0, which sends the sums back
# EXPECT: right neighbour
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
    flat = np.array(x, copy=True).ravel()
    chunks = np.array_split(flat, size)
    if rank == 0:
        for src in range(1, size):
            for chunk in chunks:
                buf = np.empty_like(chunk)
                comm.Recv(buf, source=src)
                chunk += buf
        for dst in range(1, size):
            for chunk in chunks:
                comm.Send(chunk, dest=dst)
    else:
        for chunk in chunks:
            comm.Send(chunk, dest=0)
        for chunk in chunks:
            comm.Recv(chunk, source=0)
    return flat.reshape(np.shape(x))
    ### END SOLUTION
