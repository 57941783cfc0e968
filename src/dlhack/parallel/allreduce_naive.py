"""Naive allreduce: everyone sends to a root, the root adds and sends the sum back (the slow one).

This is the parameter-server shape: rank 0 receives every other rank's array with ``Recv``,
adds them one after the other, then ``Send``s the sum to each rank in turn. It is written with
point-to-point calls only, so every message is visible in the code.

Cost in the alpha-beta model (alpha: latency per message, beta: seconds per byte, n bytes)::

    2 (p - 1) (alpha + n beta)

The root's link carries all ``2 (p - 1) n`` bytes one message after the other while every other
link idles, so the time grows linearly with the number of ranks. Compare ``allreduce_ring``,
whose bandwidth term stays near ``2 n beta`` for any ``p``.

The root adds the arrays in rank order and sends the same bytes to everyone, so every rank
ends with identical bits. Arrays travel as raw bytes (``uint8`` views) and are added with numpy,
so float16 works although older MPIs have no half type. Host (numpy) arrays only: the
communicator stages device arrays through host memory.

Lesson: "Allreduce from send and receive". The fast version is ``allreduce_ring``.
"""
import numpy as np

ROOT = 0
TAG = 7  # any fixed tag: the communicator is a private Dup, so nothing else shares it


def start_from(array, out=None):
    """Every allreduce starts from this rank's own values in ``out``: a copy of ``array``, or
    ``array`` itself when ``out is array`` (in place). Returns ``out`` and a flat view of it."""
    if out is None:
        out = array.copy(order="C")
    elif out is not array:
        np.copyto(out, array)
    if not out.flags.c_contiguous:
        raise ValueError("out must be C-contiguous")
    return out, out.reshape(-1)  # the view: (n,)


def allreduce(mpi_comm, array, out=None):
    """Sum ``array`` over every rank of ``mpi_comm`` through rank 0.

    Args:
        mpi_comm: an ``mpi4py.MPI.Comm``; every rank calls with the same shape and dtype.
        array: a numpy array (any shape, any size including 0).
        out: where to write the sum; ``out=array`` works in place. Default: a new array.

    Returns:
        ``out``, holding the elementwise sum over ranks.
    """
    rank, size = mpi_comm.rank, mpi_comm.size
    out, flat = start_from(array, out)
    if size == 1:
        return out

    if rank == ROOT:
        incoming = np.empty_like(flat)  # one receive buffer for every sender
        for source in range(size):
            if source != ROOT:
                mpi_comm.Recv(incoming.view(np.uint8), source=source, tag=TAG)
                np.add(flat, incoming, out=flat)
        for dest in range(size):
            if dest != ROOT:
                mpi_comm.Send(flat.view(np.uint8), dest=dest, tag=TAG)
    else:
        mpi_comm.Send(flat.view(np.uint8), dest=ROOT, tag=TAG)
        mpi_comm.Recv(flat.view(np.uint8), source=ROOT, tag=TAG)
    return out
