"""Garbage collection in step (parallel/gcstep.py): off while training, on every ``every``
steps, and Python's collector exactly as it was afterwards. That training reaches the same
parameters with it is tested in tests/test_train.py (``gc_every``)."""
import gc

from dlhack.parallel.gcstep import StepCollector


class Cycle:
    def __init__(self):
        self.me = self


def test_collects_only_every_n_steps_and_restores_the_collector():
    assert gc.isenabled()
    collector = StepCollector(every=3)
    collector.start()
    try:
        assert not gc.isenabled() and gc.get_freeze_count() > 0
        found = []
        for step in range(1, 7):
            Cycle()  # garbage only a collection can free
            before = gc.get_count()[0]
            collector.step(step)
            found.append(gc.get_count()[0] < before)  # a collection resets the young count
        assert found == [False, False, True, False, False, True]
        assert collector.collections == 2
    finally:
        collector.stop()
    assert gc.isenabled() and gc.get_freeze_count() == 0


def test_every_zero_leaves_python_in_charge():
    collector = StepCollector(every=0)
    collector.start()
    assert gc.isenabled() and gc.get_freeze_count() == 0
    collector.step(50)
    assert collector.collections == 0
    collector.stop()
    assert gc.isenabled()


def test_a_disabled_collector_stays_disabled():
    gc.disable()
    try:
        collector = StepCollector(every=2)
        collector.start()
        collector.stop()
        assert not gc.isenabled() and gc.get_freeze_count() == 0
    finally:
        gc.enable()
