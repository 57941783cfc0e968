"""The snapshot pytest_in_rank.py takes before learner code runs (grade/guard.py), without MPI:
what it sees replaced, and what it leaves alone."""
import types

import numpy as np

from dlhack.grade.guard import Guard


def test_a_replaced_comparison_builtin_or_method_is_named():
    guard = Guard()
    guard.take(("numpy", "builtins"))

    class Recorder:
        def record(self):
            return "failed"

    guard.take_object("Recorder", Recorder)
    saved = np.isclose
    assert guard.changed() == []
    np.isclose = lambda *a, **k: True
    Recorder.record = lambda self: "passed"
    try:
        assert guard.changed() == ["numpy.isclose", "Recorder.record"]
    finally:
        np.isclose = saved
    assert guard.changed() == ["Recorder.record"]


def test_the_tests_own_helpers_and_their_code_are_watched(tmp_path):
    module = types.ModuleType("collectives_x")
    module.__file__ = str(tmp_path / "collectives_x.py")
    exec("def serial_sum(n):\n    return n\nSEED = 2\n", module.__dict__)  # noqa: S102
    import sys

    sys.modules["collectives_x"] = module
    try:
        guard = Guard()
        guard.take_tests(tmp_path)
        module.SEED = 3  # a plain value may change as a test runs: not watched
        assert guard.changed() == []
        module.serial_sum.__code__ = (lambda n: 0).__code__
        assert guard.changed() == ["collectives_x.serial_sum.__code__"]
    finally:
        del sys.modules["collectives_x"]
