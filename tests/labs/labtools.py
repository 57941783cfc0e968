"""Helpers for graded tests: compare a result with a serial reference and say, in words a
learner can act on, how it differs."""
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
        return f"{name} is a {type(got).__name__}, not a numpy array"
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
