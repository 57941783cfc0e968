# MUTANT: returns the mean instead of the sum
# EXPECT: mean over the ranks
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
    chunks = np.array_split(flat, size)  # views into flat: writing a chunk writes flat
    right, left = (rank + 1) % size, (rank - 1) % size
    for step in range(size - 1):  # reduce-scatter
        send, recv = (rank - step) % size, (rank - step - 1) % size
        buf = np.empty_like(chunks[recv])
        comm.Sendrecv(chunks[send], dest=right, recvbuf=buf, source=left)
        chunks[recv] += buf
    for step in range(size - 1):  # allgather
        send, recv = (rank - step + 1) % size, (rank - step) % size
        comm.Sendrecv(chunks[send], dest=right, recvbuf=chunks[recv], source=left)
    return flat.reshape(np.shape(x)) / size
    ### END SOLUTION
