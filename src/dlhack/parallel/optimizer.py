"""The multi-node optimizer: average the gradients over ranks, then take the usual step.

    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
    optimizer.setup(model)
    optimizer.update(lossfun, *args)    # or loss.backward(); optimizer.update()

    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm, overlap=True)
    optimizer.update(lossfun, *args)    # the allreduce runs in buckets during backward

Data parallelism in three moves, all in ``update``:

1. The first time (and whenever a lazily initialised link gets its weights) the root's
   parameters are broadcast, so every rank starts from the same weights.
2. ``comm.multi_node_mean_grad(model)`` replaces each gradient with its mean over ranks. If
   each rank's loss is the mean over its ``b`` samples, that mean is exactly the gradient of
   the mean loss over all ``size * b`` samples: one step with a batch ``size`` times larger.
3. The wrapped optimizer (SGD, Adam, ...) takes its step. Every rank applies the same
   averaged gradient to the same weights, so the weights stay identical without being sent.

Difference from ChainerMN's wrapper: ChainerMN spends the first ``update`` on the broadcast
alone and skips that step. Ours broadcasts *before* the forward pass when given ``lossfun``
(and runs it again if that forward pass initialised new weights), so no step is lost. When
you call ``update()`` after your own ``backward()``, the first step's gradients were taken at
each rank's own initial weights: build the model from the same seed everywhere, or call
``comm.bcast_data(model)`` before the first forward pass.

Cost, for a model of ``n`` parameters in ``m`` arrays (itemsize ``s``) on ``p`` ranks:

- every step: one allreduce of all ``n`` gradients, packed into one buffer. With the ring
  (``allreduce_ring``) each rank sends ``2 (p - 1)`` messages of about ``n / p`` elements,
  ``2 (p - 1) / p * n * s`` bytes, and receives as much (a chunk over ``SEGMENT_BYTES`` goes in
  ``k`` pieces: ``(p - 1)(k + 1)`` messages). The naive one: ``2`` messages of ``n`` per rank,
  ``2 (p - 1)`` on the root. With ``zero_fill`` an unused parameter still counts in ``n``.
- the first step: ``m`` broadcasts, one per parameter array, ``n * s`` bytes from the root to
  every rank. A step that initialised a lazy link broadcasts every initialised parameter
  again (and runs its forward and backward twice).
- with GPUs, our communicator also copies the ``n`` gradients to the host and back per step.

Two paths, side by side. The naive one (the default, described above): the whole backward
pass, then one blocking allreduce; communication and computation take turns. The overlapped
one (``overlap=True``, ``dlhack.parallel.overlap``): gradients are summed in buckets of about
``bucket_bytes`` by nonblocking allreduces started while backward is still running, so the
last layers' gradients travel while the first layers' are computed. Same result, same bytes,
in more messages; it needs the loss-function path, ``update(lossfun, *args)`` (which the
Trainer's ``StandardUpdater`` uses), and always zero-fills.

Lesson: "The multi-node optimizer"; the overlapped path: lesson 9, "Hiding communication".
"""
from dlhack.parallel.overlap import BUCKET_BYTES, BucketedMeanGrad


class _MultiNodeOptimizer:
    """Wraps a Chainer optimizer; every attribute it does not define comes from that one."""

    def __init__(self, actual_optimizer, comm, zero_fill=True, overlap=None):
        # object.__setattr__: our own __setattr__ forwards to the wrapped optimizer.
        object.__setattr__(self, "actual_optimizer", actual_optimizer)
        object.__setattr__(self, "comm", comm)
        object.__setattr__(self, "zero_fill", zero_fill)
        object.__setattr__(self, "overlap", overlap)  # a BucketedMeanGrad, or None: naive
        object.__setattr__(self, "_layout", None)  # which parameters existed at the last bcast

    def setup(self, link):
        """Set up the wrapped optimizer on ``link``; returns this wrapper."""
        self.actual_optimizer.setup(link)
        return self

    def update(self, lossfun=None, *args, **kwds):
        """One data-parallel step; ``lossfun(*args, **kwds)`` as in ``chainer.Optimizer.update``."""
        target = self.actual_optimizer.target
        self._bcast_if_new_parameters(target)
        if self.overlap is not None:
            self._update_overlapped(target, lossfun, args, kwds)
            return
        if lossfun is not None:
            self._backward(target, lossfun, args, kwds)
            if self._bcast_if_new_parameters(target):
                # That forward pass created weights from this rank's own random draw:
                # take the gradients again, at the root's weights.
                self._backward(target, lossfun, args, kwds)
        self.comm.multi_node_mean_grad(target, self.zero_fill)
        self.actual_optimizer.update()

    def _update_overlapped(self, target, lossfun, args, kwds):
        if lossfun is None:
            raise TypeError("overlap=True averages the gradients while backward runs, so it "
                            "needs update(lossfun, *args); call it that way, or wrap the "
                            "optimizer without overlap")
        loss = lossfun(*args, **kwds)
        if self._bcast_if_new_parameters(target):
            loss = lossfun(*args, **kwds)  # the forward pass again, at the root's new weights
        self.overlap.backward(target, loss, getattr(self.actual_optimizer, "_loss_scale", None))
        del loss
        self.actual_optimizer.update()

    def _backward(self, target, lossfun, args, kwds):
        loss = lossfun(*args, **kwds)
        target.cleargrads()
        loss.backward(loss_scale=getattr(self.actual_optimizer, "_loss_scale", None))

    def _bcast_if_new_parameters(self, target):
        layout = [(name, param.array is not None) for name, param in sorted(target.namedparams())]
        if layout == self._layout:
            return False
        object.__setattr__(self, "_layout", layout)
        self.comm.bcast_data(target)
        return True

    def __getattr__(self, name):  # called only for names this wrapper lacks
        if name == "actual_optimizer":  # not set yet (e.g. while unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.actual_optimizer, name)

    def __setattr__(self, name, value):
        setattr(self.actual_optimizer, name, value)


def create_multi_node_optimizer(actual_optimizer, comm, zero_fill=True, overlap=False,
                                bucket_bytes=BUCKET_BYTES):
    """Wrap a Chainer optimizer so that ``update`` averages gradients over ranks first.

    Args:
        actual_optimizer: any ``chainer.Optimizer`` (e.g. ``chainer.optimizers.Adam()``).
        comm: our communicator or ChainerMN's (uses ``bcast_data`` and
            ``multi_node_mean_grad`` only).
        zero_fill: give unused parameters a zero gradient, so every rank sends the same
            layout even when a step does not touch some link.
        overlap: average the gradients in buckets while backward runs (``overlap``); needs
            ``update(lossfun, *args)`` and ``zero_fill=True``.
        bucket_bytes: with ``overlap``, a bucket closes once it holds this many bytes.

    Returns:
        The wrapper; call ``setup(model)`` on it as on the optimizer it wraps.
    """
    if overlap and not zero_fill:
        raise ValueError("overlap=True needs zero_fill=True: every rank must send every bucket")
    hook = BucketedMeanGrad(comm, bucket_bytes) if overlap else None
    return _MultiNodeOptimizer(actual_optimizer, comm, zero_fill, hook)
