"""Adam's step divided among the ranks of one node: the sharded sibling of ``MultiNodeOptimizer``.

    comm = create_communicator("shm")                       # every rank on one node
    optimizer = create_multi_node_optimizer(PackedAdam(), comm, shard=True)
    optimizer.setup(model)                                  # collective
    optimizer.update(lossfun, *args)                        # or backward(), then update()

Lesson 3's data parallelism repeats the optimizer on every rank: each rank receives all ``n``
averaged gradients and updates all ``n`` parameters, the same arithmetic ``p`` times over. Here
each rank updates one chunk of the parameters (``chunk_bounds``), and the chunks together are
the whole model: the idea of ZeRO's first stage (Rajbhandari et al., 2020), which splits
Adam's moments among the ranks. On one node the ranks share memory (``shared_memory``), so the
parameters and the moments live there once, and no rank needs the others' chunks sent back:

1. pack: each rank writes its gradients, divided by ``p``, into its own slot;
2. barrier: every slot is full (``reduce_scatter``, the profile's "allreduce");
3. rank ``r`` adds chunk ``r`` of the slots, a block at a time, and takes Adam's step on chunk
   ``r`` of the parameters and moments with that sum;
4. barrier: every chunk is updated, and every rank's model reads the new parameters
   (``update_chunk``, the profile's "optimizer").

The arithmetic is ``MultiNodeOptimizer`` with the ``shm`` communicator and ``PackedAdam``, on
the same numbers in the same order (``tests/parallel/test_sharded.py`` checks both against one
process with the whole batch).

Cost per step: two barriers (as ``shm``), ``n`` elements packed, and per rank ``n / p``
elements summed and updated, instead of ``n`` of each. Memory per node: the parameters and
Adam's two moments once (not once per rank), and ``p`` slots of gradients.

What it gives up: after ``update`` each rank's gradients are its own, not the mean, so an
optimizer hook (gradient clipping, weight decay) is refused; a parameter array replaced from
outside (a snapshot load) must be replaced with the same values on every rank, as a load does.
Only ``PackedAdam``, on the host, with every rank on one node; ``dlhack train`` uses it for
``--impl fused`` under ``shm`` unless ``--no-shard-update``.
"""
import numpy as np

from dlhack.model.ckernels import kernels_for
from dlhack.model.packed_adam import PackedAdam
from dlhack.parallel.allreduce_ring import chunk_bounds
from dlhack.parallel.communicator import pack, pieces_of, zero_filled
from dlhack.parallel.shared_memory import chunked_window, slot_window
from dlhack.parallel.wrapper import Wrapper


def can_shard(actual_optimizer, comm):
    """Why ``ShardedMultiNodeOptimizer`` cannot run with these, or None when it can."""
    if not isinstance(actual_optimizer, PackedAdam):
        return "it divides PackedAdam's step (dlhack.model.packed_adam)"
    if getattr(comm, "size", 1) < 2 or not getattr(comm, "shares_memory", False):
        return ("it needs two or more ranks on one node, with the 'shm' communicator "
                "(create_communicator('shm'))")
    return None


class ShardedMultiNodeOptimizer(Wrapper):
    """Each rank takes Adam's step on its chunk of the parameters, in memory the node shares.

    ``reduce_scatter`` and ``update_chunk`` are the two halves of a step after backward;
    they are attributes of the instance, so that ``dlhack.step_profile`` can time them.

    Args:
        actual_optimizer: a ``PackedAdam``, not set up yet.
        comm: a ``SharedMemoryCommunicator`` whose ranks share memory (``create_communicator
            ("shm")`` on one node), with two or more ranks.
    """

    def __init__(self, actual_optimizer, comm):
        why = can_shard(actual_optimizer, comm)
        if why is not None:
            raise ValueError(f"shard=True: {why}")
        super().__init__(actual_optimizer, comm, chunk=None, _windows=None, _slots=None,
                         _pieces=None, reduce_scatter=None, update_chunk=None)
        self.reduce_scatter, self.update_chunk = self._reduce_scatter, self._update_chunk

    def setup(self, link):
        """Set up the ``PackedAdam`` on ``link``, then move its buffers into shared memory,
        filled with rank 0's weights: every rank's model then holds rank 0's. Collective."""
        actual, mpi_comm = self.actual_optimizer.setup(link), self.comm.mpi_comm
        if not isinstance(actual._data, np.ndarray):
            raise TypeError("shard=True runs on the host: its buffers are shared host memory")
        n, dtype = len(actual._data), actual._data.dtype
        windows, shared = zip(*(chunked_window(mpi_comm, n, dtype) for _ in range(3)))
        slots, self._slots = slot_window(mpi_comm, n, dtype)
        self._windows = (*windows, slots)  # the memory lives as long as its window
        if self.comm.rank == 0:  # the one copy of the weights, and fresh moments
            for mine, ours in zip((actual._data, actual._m, actual._v), shared):
                ours[...] = mine
        mpi_comm.Barrier()
        actual.place(*shared, copy=False)
        self.chunk = chunk_bounds(n, self.comm.size)[self.comm.rank]
        # where each gradient goes in this rank's slot (the buffer's layout), found once
        self._pieces = pieces_of(self._slots[self.comm.rank], actual._params)
        self._layout = [id(p) for _, p in sorted(link.namedparams()) if p.array is not None]
        return self

    def _bcast_if_new_parameters(self, target):
        """Every step: the parameters must be the ones set up (the weights are shared, so
        there is never anything to send); on every rank alike, before any barrier."""
        if [id(p) for _, p in sorted(target.namedparams())
                if p.array is not None] != self._layout:
            raise ValueError("shard=True: the model's parameters changed since setup")
        return False

    def update(self, lossfun=None, *args, **kwds):
        """One data-parallel step; ``lossfun(*args, **kwds)`` as in ``chainer.Optimizer.update``."""
        target = self._backward(lossfun, args, kwds)
        self.reduce_scatter(target)
        self.update_chunk()

    def _reduce_scatter(self, target):
        """Steps 1 and 2: this rank's gradients, over ``size``, into its slot; then wait for
        every rank's."""
        actual = self.actual_optimizer
        hooks = actual._hookable  # Chainer keeps an optimizer's hooks there
        if hooks._pre_update_hooks or hooks._post_update_hooks:
            raise ValueError("shard=True leaves each rank its own gradients, which an optimizer "
                             "hook would read as the mean: remove the hook, or use shard=False")
        actual._repack()  # a parameter replaced since (a load): back into the shared buffer
        # the parameters set up: _bcast_if_new_parameters checked them at this step's forward
        pack(zero_filled(actual._params), self._slots[self.comm.rank], self.comm.size,
             self._pieces)
        self.comm.mpi_comm.Barrier()

    def _update_chunk(self):
        """Steps 3 and 4: Adam on this rank's chunk, its gradient the sum of the slots
        (``PackedAdam.update_range_sum``); then wait until every rank has updated its chunk."""
        actual = self.actual_optimizer
        actual.t += 1
        for p in actual._params:  # as PackedAdam's update: every rule knows the step
            p.update_rule.t = actual.t
        actual.update_range_sum(*self.chunk, self._slots, kernels_for(actual._data),
                                actual.step_constants())
        self.comm.mpi_comm.Barrier()
