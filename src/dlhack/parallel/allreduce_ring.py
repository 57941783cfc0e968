"""Ring allreduce: reduce-scatter then allgather around a ring of ranks (the fast one).

The array is cut into ``p`` contiguous chunks, one per rank. Rank ``r`` only ever talks to its
two neighbours: it sends to ``r + 1`` and receives from ``r - 1`` (mod ``p``), both at once with
``Sendrecv``, so every link of the ring is busy in every step.

1. Reduce-scatter, ``p - 1`` steps: pass a chunk to the right, add the chunk that arrives from
   the left into your own copy of it. After the last step rank ``r`` holds chunk ``r + 1``
   summed over every rank.
2. Allgather, ``p - 1`` steps: pass the finished chunks around the ring; each arrives straight
   in its place in ``out`` (no add, no copy).

Cost in the alpha-beta model (alpha: latency per message, beta: seconds per byte, n bytes)::

    2 (p - 1) alpha + 2 (p - 1) / p * n beta

The bandwidth term hardly grows with ``p``: each rank sends and receives about ``2n`` bytes
whatever the number of ranks, which is why NCCL and Horovod use a ring for large messages,
while the latency term grows linearly (small messages prefer a tree; see ``allreduce_mpi``).
Cutting each reduce-scatter chunk into ``k`` segments (``SEGMENT_BYTES`` below) turns the
latency term into ``(p - 1)(k + 1) alpha``: worth it only for large chunks.

Every element is summed on exactly one rank and then copied to the others, so every rank ends
with the same bits. Chunks travel as raw bytes (``uint8`` views) and are added with numpy, so
float16 works although older MPIs have no half type. Host (numpy) arrays only: the
communicator stages device arrays through host memory.

Lesson: "Allreduce from send and receive". The naive version is ``allreduce_naive``.
"""
import numpy as np

from dlhack.parallel.allreduce_naive import start_from

# Chunks above this many bytes are sent in segments: a segment is added while it is still in
# cache, instead of streaming a whole 32 MB chunk through memory twice (quiet machine, 2 ranks:
# 64 MB messages ran 1.6x faster with 1 MB or 4 MB segments than unsegmented). Every segment
# is also one more Sendrecv, a moment when both ranks must be on a core: with more processes
# than cores, fewer and larger segments wait less for the scheduler. Measure with
# ``dlhack bench allreduce``.
SEGMENT_BYTES = 4 << 20


def chunk_bounds(n, size):
    """``size`` contiguous ``(begin, end)`` slices covering ``range(n)``, lengths differing by <= 1.

    The first ``n % size`` chunks get one extra element; when ``n < size`` the last chunks are
    empty (a zero-length Sendrecv is legal MPI and costs one latency).
    """
    base, extra = divmod(n, size)
    bounds, begin = [], 0
    for i in range(size):
        end = begin + base + (1 if i < extra else 0)
        bounds.append((begin, end))
        begin = end
    return bounds


def _segment(begin, end, j, step):
    """Segment ``j``: elements ``[j * step, (j + 1) * step)`` of chunk ``[begin, end)``, clipped.

    Past the chunk's end a segment is empty, and sending it is still a (zero-byte) message.
    """
    return begin + min(j * step, end - begin), begin + min((j + 1) * step, end - begin)


def allreduce(mpi_comm, array, out=None):
    """Sum ``array`` over every rank of ``mpi_comm`` with the ring algorithm.

    Args:
        mpi_comm: an ``mpi4py.MPI.Comm``; every rank calls with the same shape and dtype.
        array: a numpy array (any shape, any size including 0).
        out: where to write the sum; ``out=array`` works in place, saving one copy.
            Default: a new array.

    Returns:
        ``out``, holding the elementwise sum over ranks.
    """
    rank, size = mpi_comm.rank, mpi_comm.size
    out, flat = start_from(array, out)  # flat: a view of out, (n,)
    if size == 1 or flat.size == 0:
        return out

    bounds = chunk_bounds(flat.size, size)
    longest = bounds[0][1] - bounds[0][0]  # chunk 0 is never shorter than the others
    step = max(1, min(longest, SEGMENT_BYTES // flat.itemsize))
    # Every rank cuts every chunk into the same number of segments (the last ones of a shorter
    # chunk may be empty), so the two sides of each Sendrecv always agree on its length.
    n_segments = -(-longest // step)
    right, left = (rank + 1) % size, (rank - 1) % size
    incoming = np.empty(step, flat.dtype)  # the one receive buffer, reused by every segment

    # 1. Reduce-scatter: at step s send chunk r - s, receive and add chunk r - s - 1.
    for s in range(size - 1):
        send_chunk = bounds[(rank - s) % size]
        recv_chunk = bounds[(rank - s - 1) % size]
        for j in range(n_segments):
            s0, s1 = _segment(*send_chunk, j, step)
            r0, r1 = _segment(*recv_chunk, j, step)
            mine, got = flat[r0:r1], incoming[:r1 - r0]
            mpi_comm.Sendrecv(flat[s0:s1].view(np.uint8), dest=right,
                              recvbuf=got.view(np.uint8), source=left)
            np.add(mine, got, out=mine)

    # 2. Allgather: at step s send chunk r + 1 - s, receive chunk r - s straight into its place.
    for s in range(size - 1):
        s0, s1 = bounds[(rank + 1 - s) % size]
        r0, r1 = bounds[(rank - s) % size]
        mpi_comm.Sendrecv(flat[s0:s1].view(np.uint8), dest=right,
                          recvbuf=flat[r0:r1].view(np.uint8), source=left)
    return out
