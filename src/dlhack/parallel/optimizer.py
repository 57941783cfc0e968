"""The multi-node optimizer: average the gradients over ranks, then take the usual step.

    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
    optimizer.setup(model)
    optimizer.update(lossfun, *args)    # or loss.backward(); optimizer.update()

    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm, overlap=True)
    optimizer.update(lossfun, *args)    # the allreduce runs in buckets during backward

Two sibling classes, picked by ``overlap``: ``MultiNodeOptimizer``, the naive path (the whole
backward pass, then one blocking allreduce), and ``OverlappedMultiNodeOptimizer``, the fast
one (gradient buckets allreduced while backward runs: ``dlhack.parallel.overlap``). A third,
``shard=True``, divides Adam's step among the ranks of a node (``dlhack.parallel.sharded``).
All stand in for the Chainer optimizer they wrap: Trainer, updaters, serializers and schedules
see it.
Unlike ChainerMN's, the first ``update`` also takes a step.

Cost per step, for ``n`` parameters (itemsize ``s``) in ``m`` arrays on ``p`` ranks: one
allreduce of all ``n`` gradients, packed into one buffer (with the ring, ``2 (p - 1)`` messages
and ``2 (p - 1) / p * n * s`` bytes sent per rank); overlapped, the same bytes in one message
per bucket. The first step, and any step that initialises a lazy link: ``m`` broadcasts,
``n * s`` bytes from the root (after a lazy link, the forward pass runs twice).

Why it works, and how ChainerMN's differs: lesson 3, "ChainerMN in six edits", section "Inside
the multi-node optimizer" (lessons/03_chainermn.ipynb). The overlapped path: lesson 9, "Hiding
communication" (lessons/09_overlap.ipynb).
"""
from dlhack.parallel.overlap import BUCKET_BYTES, BucketedMeanGrad
from dlhack.parallel.sharded import ShardedMultiNodeOptimizer
from dlhack.parallel.wrapper import Wrapper


class MultiNodeOptimizer(Wrapper):
    """The naive path: the whole backward pass, then one blocking allreduce of every gradient.

    Communication and computation take turns. ``update`` accepts both of Chainer's calling
    conventions; after your own ``backward()``, build the model from the same seed on every
    rank (the first step's gradients were taken at each rank's own weights).

    Args:
        actual_optimizer: the Chainer optimizer that takes the step.
        comm: uses ``bcast_data`` and ``multi_node_mean_grad``.
        zero_fill: give an unused parameter a zero gradient, so every rank sends the same layout.
    """

    def __init__(self, actual_optimizer, comm, zero_fill=True):
        super().__init__(actual_optimizer, comm, zero_fill=zero_fill)

    def update(self, lossfun=None, *args, **kwds):
        """One data-parallel step; ``lossfun(*args, **kwds)`` as in ``chainer.Optimizer.update``."""
        target = self._backward(lossfun, args, kwds)
        self.comm.multi_node_mean_grad(target, self.zero_fill)
        self.actual_optimizer.update()


class OverlappedMultiNodeOptimizer(Wrapper):
    """The fast path: gradients allreduced in buckets while backward still runs.

    The same result as ``MultiNodeOptimizer`` with ``zero_fill=True``. It needs the loss
    function, ``update(lossfun, *args)`` (as Chainer's ``StandardUpdater`` calls it), to run
    backward itself. ``overlap`` is the ``BucketedMeanGrad`` hook that does the work: its
    ``buckets``, ``events`` and ``seconds_exposed`` tell what the last step did.

    Args:
        actual_optimizer: the Chainer optimizer that takes the step.
        comm: uses ``bcast_data``, ``bcast_obj``, ``rank``, ``size`` and ``mpi_comm``.
        bucket_bytes: a bucket closes once it holds this many bytes of gradients.
    """

    def __init__(self, actual_optimizer, comm, bucket_bytes=BUCKET_BYTES):
        super().__init__(actual_optimizer, comm, overlap=BucketedMeanGrad(comm, bucket_bytes))

    def update(self, lossfun=None, *args, **kwds):
        """One data-parallel step; ``lossfun(*args, **kwds)`` as in ``chainer.Optimizer.update``."""
        if lossfun is None:
            raise TypeError("overlap=True averages the gradients while backward runs, so it "
                            "needs update(lossfun, *args); call it that way, or wrap the "
                            "optimizer without overlap")
        loss = self._forward(lossfun, args, kwds)
        self.overlap.backward(self.actual_optimizer.target, loss,
                              self.actual_optimizer._loss_scale)
        del loss
        self.actual_optimizer.update()


def create_multi_node_optimizer(actual_optimizer, comm, zero_fill=True, overlap=False,
                                bucket_bytes=BUCKET_BYTES, shard=False):
    """Wrap a Chainer optimizer so that ``update`` averages gradients over ranks first.

    Args:
        actual_optimizer: any ``chainer.Optimizer`` (e.g. ``chainer.optimizers.Adam()``).
        comm: our communicator or ChainerMN's.
        zero_fill: give unused parameters a zero gradient, so every rank sends the same
            layout even when a step does not touch some link.
        overlap: average the gradients in buckets while backward runs
            (``OverlappedMultiNodeOptimizer``); needs ``update(lossfun, *args)`` and
            ``zero_fill=True``. Otherwise a ``MultiNodeOptimizer``.
        bucket_bytes: with ``overlap``, a bucket closes once it holds this many bytes.
        shard: each rank of one node updates its chunk of the parameters, kept in memory the
            node shares (``dlhack.parallel.sharded``); needs ``PackedAdam`` and the ``shm``
            communicator, and neither ``overlap`` nor ``zero_fill=False``.

    Returns:
        The wrapper; call ``setup(model)`` on it as on the optimizer it wraps.
    """
    if shard:
        if overlap or not zero_fill:
            raise ValueError("shard=True averages every gradient after backward: it takes "
                             "neither overlap=True nor zero_fill=False")
        return ShardedMultiNodeOptimizer(actual_optimizer, comm)
    if not overlap:
        return MultiNodeOptimizer(actual_optimizer, comm, zero_fill)
    if not zero_fill:
        raise ValueError("overlap=True needs zero_fill=True: every rank must send every bucket")
    return OverlappedMultiNodeOptimizer(actual_optimizer, comm, bucket_bytes)
