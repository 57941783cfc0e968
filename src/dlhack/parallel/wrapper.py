"""What every multi-node optimizer shares (``optimizer``'s two, ``sharded``'s): standing in for
the Chainer optimizer it wraps, and broadcasting rank 0's weights when they first appear.

Cost: one ``bcast_data`` (a ``Bcast`` per parameter array) on the first step, and again on any
step that initialises a lazy link; nothing otherwise. ``compute_seconds`` adds up the time of
forward and backward, this rank's own work (``speed_shares`` reads it).
"""
import time


class Wrapper:
    """What every multi-node optimizer shares: forwarding to the wrapped one, and the broadcast.

    The names set in ``__init__`` are the wrapper's own; every other attribute, read or written,
    is the wrapped optimizer's (``optimizer.lr = ...`` from a schedule sets the real one), as in
    ChainerMN's wrapper.
    """

    def __init__(self, actual_optimizer, comm, **own):
        # Straight into __dict__: our __setattr__ sends names it does not hold yet onwards.
        vars(self).update(actual_optimizer=actual_optimizer, comm=comm, _layout=None,
                          compute_seconds=0.0, **own)

    def setup(self, link):
        """Set up the wrapped optimizer on ``link``; returns this wrapper."""
        self.actual_optimizer.setup(link)
        return self

    def __getattr__(self, name):  # called only for names this wrapper lacks
        if name == "actual_optimizer":  # not set yet (while copying or unpickling): no recursion
            raise AttributeError(name)
        return getattr(self.actual_optimizer, name)

    def __setattr__(self, name, value):
        if name in vars(self):
            vars(self)[name] = value
        else:
            setattr(self.actual_optimizer, name, value)

    def _bcast_if_new_parameters(self, target):
        """Broadcast rank 0's weights if the initialised parameters changed; True if it did."""
        layout = [(name, param.array is not None) for name, param in sorted(target.namedparams())]
        if layout == self._layout:
            return False
        self._layout = layout
        self.comm.bcast_data(target)
        return True

    def _forward(self, lossfun, args, kwds):
        """``lossfun(*args, **kwds)`` computed at rank 0's weights."""
        target = self.actual_optimizer.target
        if self._layout is None:  # the first step: rank 0's weights before any forward pass
            self._bcast_if_new_parameters(target)
        loss = lossfun(*args, **kwds)
        if self._bcast_if_new_parameters(target):
            # That pass gave a lazy link weights from this rank's own random draw: run it
            # again, at the root's weights.
            loss = lossfun(*args, **kwds)
        return loss

    def _backward(self, lossfun, args, kwds):
        """This step's own gradients: ``lossfun(*args, **kwds)`` forward at rank 0's weights,
        then backward; with ``lossfun`` None the caller ran backward (only weights that are new
        since the last step are sent). Returns the model (the optimizer's target)."""
        target = self.actual_optimizer.target
        if lossfun is None:
            self._bcast_if_new_parameters(target)
            return target
        start = time.perf_counter()
        loss = self._forward(lossfun, args, kwds)
        target.cleargrads()
        loss.backward(loss_scale=self.actual_optimizer._loss_scale)
        self.compute_seconds += time.perf_counter() - start  # this rank's own work, no waiting
        return target
