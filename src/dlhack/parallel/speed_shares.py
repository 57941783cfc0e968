"""Each rank's share of every global batch in proportion to its speed, for cores that do not
run equally fast.

    iterator = BalancedIterator(train, 64, comm.size, comm.rank)   # one global batch per step
    trainer.extend(SpeedShares(iterator, optimizer, comm))         # dlhack train --balance-speed

``BalancedIterator`` deals every rank the same tokens at every step: the same work, which takes
the same time only where every rank computes equally fast. On a shared machine one core can run
slower than another for seconds or minutes (a neighbour on the host, another process on that
core), and a synchronous step then waits for it at every step: the wait at the median step of
``dlhack train --profile`` is no longer near zero, and ``dlhack bench scaling --floor`` shows
even equal matrix products losing to the barrier.

Every ``every`` steps the ranks agree on how fast each has been (tokens per second of its own
forward and backward, ``Wrapper.compute_seconds``: no waiting in it), and the iterator deals the
next global batches in proportion (``split_by_tokens`` with ``shares``); each measurement weighs
``1 - keep`` against the shares before it. The global batches, and the normalizer every loss is
divided by, do not change, so the mean gradient is still exactly the global batch's on one
process (``tests/parallel/test_translator_equivalence.py`` trains with uneven shares). Only who
computes which sentences changes, and every rank derives the same shares from the same gathered
figures, so all deal alike.

Costs: one ``allgather`` of a float every ``every`` steps. Ranks on the host only (on a GPU,
forward and backward return when queued), and not with ``--overlap`` (its backward holds the
communication). A resumed run starts again from equal shares.
"""
import chainer
import numpy as np


class SpeedShares(chainer.training.Extension):
    """Set ``iterator.shares`` to the ranks' measured speeds every ``every`` iterations.

    Args:
        iterator: a ``BalancedIterator`` (it deals by ``shares`` and counts its ``tokens``).
        optimizer: the multi-node optimizer (it adds up ``compute_seconds``).
        comm: the communicator (its ``mpi_comm`` gathers the speeds).
        every: iterations between agreements; the first window starts after ``every`` steps
            (the first steps allocate memory and broadcast the weights).
        keep: the weight of the shares so far against a new measurement.
        least: no share below this fraction of an equal one (every rank keeps some work).
    """

    trigger = 1, "iteration"

    def __init__(self, iterator, optimizer, comm, every=20, keep=0.5, least=0.25):
        if not hasattr(iterator, "shares"):
            raise TypeError("SpeedShares deals BalancedIterator's global batches (--balance)")
        if not hasattr(optimizer, "compute_seconds"):
            raise TypeError("SpeedShares reads the time a multi-node optimizer (dlhack.parallel."
                            "create_multi_node_optimizer) spends in forward and backward")
        if iterator.size != comm.size:
            raise ValueError(f"SpeedShares: the iterator deals among {iterator.size} ranks, the "
                             f"communicator has {comm.size}")
        self.iterator, self.optimizer, self.comm = iterator, optimizer, comm
        self.every, self.keep, self.least = every, keep, least
        self.history = []  # the shares after each agreement
        self._since = None  # (tokens, seconds) at the start of the window

    def __call__(self, trainer):
        if trainer.updater.iteration % self.every:
            return
        now = self.iterator.tokens, self.optimizer.compute_seconds
        since, self._since = self._since, now
        if since is None:
            return
        tokens, seconds = now[0] - since[0], now[1] - since[1]
        speeds = np.array(self.comm.mpi_comm.allgather(tokens / seconds if seconds > 0 else 0.0))
        if not (speeds > 0).all():  # on every rank alike: the same gathered figures
            raise RuntimeError("SpeedShares: a rank timed no forward and backward (with "
                               "--overlap, backward holds the communication): leave one out")
        self.iterator.shares = self.agree(speeds)
        self.history.append(self.iterator.shares)

    def agree(self, speeds):
        """The next shares from the ranks' ``speeds``: a fraction of the work each, summing to
        one, the same on every rank given the same ``speeds``."""
        size = len(speeds)
        before = np.full(size, 1 / size) if self.iterator.shares is None else self.iterator.shares
        shares = self.keep * before + (1 - self.keep) * speeds / speeds.sum()
        shares = np.maximum(shares, self.least / size)
        return shares / shares.sum()
