"""Gradients averaged through shared memory, for ranks on one node: no messages, one buffer.

    comm = create_communicator("shm")   # every rank on one node; otherwise it works as "ring"

``communicator.SharedMemoryCommunicator``, the fast sibling of ``Communicator``, packs; this
module holds the shared windows and the sum.

Ranks on one node can read each other's memory. MPI-3 hands out such memory as a shared window
(``MPI_Win_allocate_shared``): every rank allocates a slot in one segment, and every rank can
read every slot as an ordinary array. ``multi_node_mean_grad`` then needs no messages at all:

1. pack: each rank writes its gradients, divided by ``size``, into its own slot (the same copy
   the plain path makes into its private buffer);
2. barrier: every slot is full;
3. sum: rank ``r`` adds chunk ``r`` of every slot into chunk ``r`` of one shared ``mean``
   (the reduce-scatter of the ring, with nothing sent: each element is added on one rank);
4. barrier: every chunk is summed;
5. each ``param.grad`` becomes its view of ``mean``, which every rank reads (the allgather,
   with nothing copied).

Cost per call: two barriers, and per rank ``n`` bytes read and
``n / p`` written in step 3, against the ring's ``2 (p - 1)`` messages, each copied into MPI's
own shared memory by the sender and out of it by the receiver, plus the same additions.
``dlhack bench scaling --compare-communicator ring`` measures what that changes in training
(``dlhack train``'s default communicator, ``auto``, is this one).

The means stay valid until the next call, which writes the next ones into the same ``mean``
(Chainer clears the gradients before every step, so training never sees it; ``.copy()`` one to
keep it). Memory: ``p + 1`` copies of the gradients per node, shared, allocated on the first
call and again for each new layout (a model whose parameters change).

Where the ranks do not share memory (several nodes), and for device or mixed-dtype gradients,
``multi_node_mean_grad`` is the plain ``Communicator``'s, with the ring (with one rank it does
nothing: each gradient is its own mean).
GPUs have their own version of the idea: NCCL moves data between the GPUs of a node over NVLink
or PCIe without the host.

Lesson 3's table of names lists it; the lessons themselves run the ring, the readable one.
"""
import numpy as np
from mpi4py import MPI

from dlhack.parallel.allreduce_ring import chunk_bounds


def slot_window(mpi_comm, n, dtype):
    """``(window, slots)``: every rank allocates a slot of ``n`` elements of ``dtype``, and
    ``slots[i]``, rank ``i``'s, is a numpy view every rank can read and write. Collective;
    keep the window (the memory goes with it)."""
    window = MPI.Win.Allocate_shared(n * np.dtype(dtype).itemsize, np.dtype(dtype).itemsize,
                                     comm=mpi_comm)
    return window, [np.frombuffer(window.Shared_query(i)[0], dtype, n)
                    for i in range(mpi_comm.size)]


def chunked_window(mpi_comm, n, dtype):
    """``(window, array)``: one shared array of ``n`` elements, rank ``r`` allocating chunk
    ``r`` of it (``chunk_bounds``: its pages lie where the rank that writes them runs).
    Collective; keep the window."""
    itemsize = np.dtype(dtype).itemsize
    begin, end = chunk_bounds(n, mpi_comm.size)[mpi_comm.rank]
    window = MPI.Win.Allocate_shared((end - begin) * itemsize, itemsize, comm=mpi_comm)
    # The chunks of a window are contiguous, in rank order (MPI's default), so the whole
    # array starts at rank 0's chunk.
    start = window.Shared_query(0)[0].address
    return window, np.frombuffer(MPI.buffer.fromaddress(start, n * itemsize), dtype, n)


class SharedWindows:
    """Every rank's slot of ``n`` elements of ``dtype``, and one shared ``mean``, on one node.

    ``slots[i]`` is rank ``i``'s slot and ``mean`` the sum, both numpy views of shared memory
    that every rank of ``mpi_comm`` can read and write. Creating one is collective.
    """

    def __init__(self, mpi_comm, n, dtype):
        # Every rank allocates its slot; each ``mean`` element lives with the rank that sums it.
        self._slots, self.slots = slot_window(mpi_comm, n, dtype)
        self._mean, self.mean = chunked_window(mpi_comm, n, dtype)


def windows_for(cache, mpi_comm, n, dtype):
    """``cache[n, dtype]``, made (collectively) the first time a layout is seen; kept for good:
    the gradients of a caller may still be views of an older one."""
    if (n, dtype) not in cache:
        cache[n, dtype] = SharedWindows(mpi_comm, n, dtype)
    return cache[n, dtype]


def sum_slots(mpi_comm, shared):
    """Steps 2 to 4, once every rank has packed its share into ``shared.slots[rank]``: on
    return, ``shared.mean`` holds the sum of the slots, on every rank."""
    rank, size, n = mpi_comm.rank, mpi_comm.size, len(shared.mean)
    mpi_comm.Barrier()                                     # 2. every slot full
    begin, end = chunk_bounds(n, size)[rank]               # 3. my chunk of the sum
    mine, slots = shared.mean[begin:end], [slot[begin:end] for slot in shared.slots]
    np.add(slots[0], slots[1], out=mine)
    for slot in slots[2:]:
        np.add(mine, slot, out=mine)
    mpi_comm.Barrier()                                     # 4. every chunk summed
