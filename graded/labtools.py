"""Helpers for graded tests: compare a result with a serial reference and say, in words a
learner can act on, how it differs; and keep library answers out of reach of a lab's answers."""
import sys
from contextlib import contextmanager
from importlib.abc import MetaPathFinder

import numpy as np


def spans(indices, limit=6):
    """``[3, 4, 5, 9]`` -> ``"3..5, 9"``; at most ``limit`` runs, then an ellipsis."""
    runs, start = [], None
    for i, k in enumerate(indices):
        if start is None:
            start = k
        if i + 1 == len(indices) or indices[i + 1] != k + 1:
            runs.append(f"{start}" if start == k else f"{start}..{k}")
            start = None
    return ", ".join(runs[:limit]) + (", ..." if len(runs) > limit else "")


def compare(got, want, name="the result", rtol=1e-6, atol=1e-9):
    """None when ``got`` matches the reference ``want``; else one sentence on how it differs."""
    if got is None:
        return f"{name} is None: did the function forget to `return`?"
    if not isinstance(got, np.ndarray):
        return f"{name} is a {getattr(got, 'type_name', type(got).__name__)}, not a numpy array"
    if got.shape != want.shape:
        return f"{name} has shape {got.shape}, expected {want.shape}"
    if got.dtype != want.dtype:
        return f"{name} has dtype {got.dtype}, expected {want.dtype} (keep the input's dtype)"
    close = np.isclose(got, want, rtol=rtol, atol=atol)
    if close.all():
        return None
    wrong = np.flatnonzero(~close.ravel())
    k = wrong[0]
    return (f"{name} differs from the serial reference at element{'s' if len(wrong) > 1 else ''} "
            f"{spans(list(wrong))} of {want.size} (element {k}: got {got.flat[k]:.6g}, "
            f"expected {want.flat[k]:.6g})")


class _Blocked(MetaPathFinder):
    def __init__(self, prefixes, reason):
        self.prefixes, self.reason = tuple(prefixes), reason

    def blocks(self, name):
        return any(name == p or name.startswith(p + ".") for p in self.prefixes)

    def find_spec(self, name, path=None, target=None):
        if self.blocks(name):
            raise ImportError(self.reason.format(name=name))


def block_imports(prefixes, reason):
    """Make the modules under ``prefixes`` unimportable in this (graded) process.

    For a lab whose answer is a library function: importing it raises ImportError with
    ``reason`` (``{name}`` is the module), so the learner's message says why. Call it at import
    time of a lab's helper module, before the answers are imported; modules already imported
    are dropped from ``sys.modules`` so that a later import meets the block too.
    """
    finder = _Blocked(prefixes, reason)
    for name in [n for n in sys.modules if finder.blocks(n)]:
        del sys.modules[name]
    sys.meta_path.insert(0, finder)


@contextmanager
def lifted():
    """``block_imports``' blocks lifted inside the ``with``, for the test's own code (a
    communicator the test makes for the learner); on leaving, what was imported under a block is
    dropped from ``sys.modules`` again, so that learner code meets the block as before."""
    finders = [f for f in sys.meta_path if isinstance(f, _Blocked)]
    for finder in finders:
        sys.meta_path.remove(finder)
    try:
        yield
    finally:
        for finder in reversed(finders):
            sys.meta_path.insert(0, finder)
            for name in [n for n in sys.modules if finder.blocks(n)]:
                del sys.modules[name]


class LibraryAnswer(RuntimeError):
    """Raised when an answer calls the library function that its exercise asks it to write."""


def switch_off(targets, reason):
    """Replace each ``(owner, attribute)`` (a module's function, a class's method) with one that
    raises ``LibraryAnswer(reason.format(name=...))``, for the rest of this graded process.

    For library code that the tests themselves import (so it cannot be blocked at import), but
    whose answers the learner must not borrow; call it at import time of a lab's helper module.
    """
    for owner, name in targets:
        label = f"{getattr(owner, '__name__', owner)}.{name}"

        def refuse(*args, _label=label, **kwargs):
            raise LibraryAnswer(reason.format(name=_label))

        setattr(owner, name, refuse)


def drawn(seed):
    """The words a failure message ends with for a case drawn from the grader's ``seed``."""
    return f" [a drawn case: seed {seed}]"
