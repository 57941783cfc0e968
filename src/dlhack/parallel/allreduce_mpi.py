"""MPI's own allreduce: one call to ``MPI_Allreduce`` (the reference the others are timed against).

The MPI library picks an algorithm by message size and rank count. MPICH's classic choice is
recursive doubling for short messages and Rabenseifner's reduce-scatter + allgather for long
ones (recent versions choose from a tuning table, and may also use shared memory). Their
costs in the alpha-beta model (alpha: latency per message, beta: seconds per byte, n bytes,
p ranks)::

    recursive doubling:  log2(p) alpha + log2(p) n beta
    Rabenseifner:        2 log2(p) alpha + 2 (p - 1) / p * n beta

The second has the same bandwidth term as our ring with fewer latency terms. In practice the
constant factors (copies through shared memory, cache behaviour) decide: run
``dlhack bench allreduce`` to see where ``allreduce_ring`` wins on your machine.

float16: MPI before 5.0 has no half-precision type, so for dtype float16 this module uses
``MPI.FLOAT16_T`` when the library has it (MPICH 5 does) and otherwise sums in float32
(as ChainerMN's naive communicator does), which doubles the bytes sent.
"""
import numpy as np
from mpi4py import MPI

# MPI 5.0 added MPI_FLOAT16_T; with an older library mpi4py reports it as DATATYPE_NULL.
HAS_FLOAT16 = MPI.FLOAT16_T != MPI.DATATYPE_NULL


def allreduce(mpi_comm, array, out=None):
    """Sum ``array`` over every rank of ``mpi_comm`` with ``MPI_Allreduce``.

    Args:
        mpi_comm: an ``mpi4py.MPI.Comm``; every rank calls with the same shape and dtype.
        array: a numpy array (any shape, any size including 0); also a CuPy array when the MPI
            library is CUDA-aware (mpi4py then passes the device pointer).
        out: where to write the sum; ``out=array`` works in place (``MPI.IN_PLACE``).
            Default: a new array.

    Returns:
        ``out``, holding the elementwise sum over ranks.
    """
    if array.dtype == np.float16 and not HAS_FLOAT16:
        wide = array.astype(np.float32)
        mpi_comm.Allreduce(MPI.IN_PLACE, wide)
        if out is None:
            return wide.astype(np.float16)
        out[...] = wide
        return out

    def typed(buffer):
        # mpi4py infers the MPI type from the array's dtype, except for half precision.
        return [buffer, MPI.FLOAT16_T] if buffer.dtype == np.float16 else buffer

    if out is array:
        mpi_comm.Allreduce(MPI.IN_PLACE, typed(out))
    else:
        if out is None:
            out = np.empty_like(array) if isinstance(array, np.ndarray) else array.copy()
        mpi_comm.Allreduce(typed(array), typed(out))
    return out
