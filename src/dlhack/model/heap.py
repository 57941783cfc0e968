"""Keep freed memory in the process, so that the arrays of every training step reuse it.

    keep_freed_memory()      # once, before training (FusedSeq2seq does it when made)

A training step allocates, fills and frees its activations and gradients: some hundred MB of
arrays, the same sizes every step. glibc's ``malloc`` maps each large block fresh from the
kernel and, once freed, hands it (or the top of its heap) back; the next step then pays a page
fault for every 4 KiB it touches again (about 10,000 faults and 30 ms of system time per step
of the 256-unit, 3-layer translator, ``dlhack bench model`` measures it). Raising the mmap and
trim thresholds makes glibc keep those blocks for reuse.

Costs: the process's resident memory stays near its peak after training instead of shrinking;
the peak itself is unchanged. A no-op (returning False) where the C library is not glibc.
"""
import ctypes
import ctypes.util

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)


def keep_freed_memory(mmap_threshold=32 << 20, trim_threshold=1 << 30):
    """Serve blocks up to ``mmap_threshold`` bytes from the heap and keep up to
    ``trim_threshold`` bytes of free heap; returns whether the C library took both."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and \
        bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))
