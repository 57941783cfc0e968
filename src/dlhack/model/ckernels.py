"""The fused translator's elementwise work in one pass over memory: ``elementwise.c``, compiled
on first use with the system's C compiler and loaded with ctypes.

    lib = ckernels.kernels()          # the loaded library, or None: use the numpy path
    print(ckernels.describe())        # which path runs, and why ("compiled C ..." or "numpy ...")

``dlhack.model.fused_lstm`` (an LSTM step's gates and cell, forward and backward),
``dlhack.model.packed_adam`` (Adam's update, and the sharded update's, which adds the
ranks' slots in the same pass) and ``dlhack.model.fused`` (an embedding's
backward) call it where it loaded, else run their numpy code:
the same arithmetic in a dozen passes over memory (``dlhack bench model`` prints which ran, and
the time the rest of the step takes). ``DLHACK_KERNELS=numpy`` forces the numpy path (tests
run both); ``CC`` names the compiler (default ``cc``). The library goes into
``$XDG_CACHE_HOME/dlhack/`` (``~/.cache``; a private folder when a grade counts), named by the
digest of the source, the flags, the compiler and the CPU, so a changed source or another
machine builds its own.

Costs: about a second of ``cc``, once per user and machine. Built with ``-O3 -march=native``
(tried without ``-march=native`` if that fails) and the parts of ``-ffast-math`` that let the
loops vectorize, ``exp`` included (a polynomial of its own): results equal numpy's to float
tolerance, not bit for bit. Not ``-ffast-math`` itself: GCC then links a start-up routine into
the library that, once loaded, flushes subnormal numbers to zero in the whole process, numpy
included (numpy warns, on stderr, and nbgrader scores such a cell 0).
"""
import atexit
import ctypes
import functools
import hashlib
import os
import platform
import shutil
import tempfile
from pathlib import Path

import numpy as np

from dlhack.cbuild import shared_library

SOURCE = Path(__file__).with_name("elementwise.c")
# -ffast-math's freedoms that the loops need to vectorize (finite-math-only: the clamps of exp_),
# without -ffast-math's crtfastmath.o. A NaN or an infinity in the input is not carried through.
VECTORIZE = ["-fno-math-errno", "-fno-trapping-math", "-fno-signed-zeros", "-fassociative-math",
             "-freciprocal-math", "-ffinite-math-only"]
FLAGS = [["-O3", *VECTORIZE, "-march=native"], ["-O3", *VECTORIZE]]
FORCE = "DLHACK_KERNELS"  # "numpy": never the compiled path
_p, _l, _f = ctypes.c_void_p, ctypes.c_long, ctypes.c_float
SIGNATURES = {  # ctypes argument types of each C function (all return void)
    "lstm_forward_step": [_l, _l, _p, _p, _p, _p, _l, _p, _p],
    "lstm_backward_step": [_l, _l, _p, _p, _p, _l, _p, _p, _p, _p],
    "lstm_cells": [_l, _p, _l, _p, _p, _p],
    "dropout_apply": [_l, _p, _p, _f, _p],
    "dropout_keep": [_l, _l, _l, _p],
    "softmax_xent_rows": [_l, _l, _p, _p, _p, _l, _p],
    "adam_update": [_l, _p, _p, _p, _p, _f, _f, _f, _f],
    "adam_update_sum": [_l, _l, _p, _l, _p, _p, _p, _f, _f, _f, _f],
    "scatter_add_rows": [_l, _l, _p, _p, _p],
}


def compiler():
    """``$CC``, else ``cc`` or ``gcc`` on PATH; None when there is none."""
    cc = os.environ.get("CC") or "cc"
    return shutil.which(cc) or (None if os.environ.get("CC") else shutil.which("gcc"))


def cpu():
    """What identifies this CPU for ``-march=native``: machine, model name and feature flags."""
    try:
        info = Path("/proc/cpuinfo").read_text()
    except OSError:
        info = ""
    lines = [ln for ln in info.splitlines() if ln.startswith(("model name", "flags"))][:2]
    return platform.machine() + "\n".join(lines)


def cache_dir():
    """``$XDG_CACHE_HOME/dlhack`` (``~/.cache``); when a grade counts (nbgrader's
    ``NBGRADER_EXECUTION``: learner code may have run as this user and left a library there)
    a fresh private folder instead, as ``dlhack.grade.pmpi`` does."""
    if os.environ.get("NBGRADER_EXECUTION"):
        return Path(_private_dir())
    return Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dlhack"


@functools.lru_cache(maxsize=1)
def _private_dir():
    """A folder of this process's own, removed when it exits (a loaded library needs no file)."""
    path = tempfile.mkdtemp(prefix="dlhack-elementwise-")
    atexit.register(shutil.rmtree, path, ignore_errors=True)
    return path


def library_path(cc, flags, cache=None):
    """``CACHE/libdlhack_elementwise-DIGEST.so`` for this source, flags, compiler and CPU."""
    digest = hashlib.sha256(SOURCE.read_bytes() + " ".join(flags).encode()
                            + os.path.realpath(cc).encode() + cpu().encode()).hexdigest()
    return Path(cache or cache_dir()) / f"libdlhack_elementwise-{digest[:16]}.so"


def build(cc, flags, dest):
    """Compile the source to ``dest`` (atomically); returns None, or why it failed."""
    return shared_library([cc, *flags], SOURCE, dest, libs=["-lm"])


def load(cc=None, cache=None):
    """``(library, how)`` built (or found built) with ``cc``; ``(None, why not)`` otherwise."""
    cc = cc or compiler()
    if cc is None:
        return None, "numpy (no C compiler found: set CC or install gcc)"
    reasons = []
    for flags in FLAGS:
        path = library_path(cc, flags, cache)
        try:
            why = None if path.is_file() else build(cc, flags, path)
            if why is None:
                lib = ctypes.CDLL(str(path))
                for name, argtypes in SIGNATURES.items():
                    getattr(lib, name).argtypes = argtypes
                    getattr(lib, name).restype = None
                return lib, f"compiled C ({SOURCE.name}, {cc} {' '.join(flags)})"
        except (OSError, AttributeError) as err:
            why = f"{path} could not be built or loaded: {err}"
        reasons.append(why)
    return None, f"numpy (the C kernels did not build: {reasons[-1]})"


@functools.lru_cache(maxsize=1)
def _loaded():
    return load()


def kernels():
    """The compiled library (built on first use), or None: the numpy path (forced by
    ``DLHACK_KERNELS=numpy``, or no compiler, or a failed build)."""
    if os.environ.get(FORCE) == "numpy":
        return None
    return _loaded()[0]


def kernels_for(array):
    """``kernels()`` where the C runs on ``array`` (a float32 numpy array), else None."""
    if isinstance(array, np.ndarray) and array.dtype == np.float32:
        return kernels()
    return None


def describe():
    """Which path ``kernels()`` gives, in words."""
    if os.environ.get(FORCE) == "numpy":
        return f"numpy (forced by {FORCE}=numpy)"
    return _loaded()[1]


def address(array):
    """The address of a numpy array's first element (for a ``c_void_p`` argument)."""
    return array.__array_interface__["data"][0]
