"""Python's garbage collector, run at the same step on every rank instead of whenever it likes.

    collector = StepCollector(every=50)      # dlhack train's updater does this (--gc-every)
    collector.start()                        # before the first step
    collector.step(iteration)                # at the end of every step, inside its timing
    collector.stop()                         # after the last

Why a data-parallel run cares. CPython collects when allocations pass a threshold, so a rank
stops for a collection at a moment of its own: a few milliseconds, now and then a few tens
(measured while writing this: about 2.6 young-generation collections per step of the demo model
and, every fourth step or so, a middle-generation one of about 3 ms). One process alone
just runs a little slower. In a synchronous step every rank waits at the allreduce for the
slowest one, so each pause of any rank is added to every rank's step: with two ranks, about
twice the time lost, showing up as "wait" in ``dlhack train --profile``. The remedy (Megatron-LM
calls it manual GC): turn automatic collection off during training and collect every ``every``
steps, at the same iteration on every rank, so the pauses line up and nobody waits for another's.

``gc.freeze()`` first moves everything alive at the start (Chainer, numpy, the corpus, the
model) out of the collector's sight, so each collection only scans what training made since.
A module first imported during training is not among them, and every later collection on that
rank scans it: import before training starts (``report.LivePlot`` does).
Chainer's graph of a step is freed by reference counting when the step ends; what a collection
finds is the odd reference cycle, which is why collecting every few dozen steps loses no memory
to speak of. Only the timing changes, never the numbers: training is bit-identical with and
without (``tests/parallel/test_gcstep.py``).
"""
import gc


class StepCollector:
    """Collect garbage every ``every`` iterations, at the same iteration on every rank.

    The collections happen inside the step (the caller times them with it), so a throughput
    measured with the collector pays for them.

    Args:
        every: iterations between collections; 0 leaves Python's own collector on.
    """

    def __init__(self, every=50):
        self.every = every
        self.collections = 0
        self._was_enabled = None

    def start(self):
        """Collect once, put what is alive out of sight (``gc.freeze``), turn automatic
        collection off. Does nothing when ``every`` is 0 or when started already."""
        if not self.every or self._was_enabled is not None:
            return
        self._was_enabled = gc.isenabled()
        gc.collect()
        gc.freeze()  # libraries, data, model: never scanned again
        gc.disable()

    def step(self, iteration):
        """Call at the end of step ``iteration`` (counted from 1) on every rank."""
        if self.every and self._was_enabled is not None and iteration % self.every == 0:
            gc.collect()
            self.collections += 1

    def stop(self):
        """Undo ``start``: the collector as it was before."""
        if self._was_enabled is None:
            return
        gc.unfreeze()
        if self._was_enabled:
            gc.enable()
        self._was_enabled = None
