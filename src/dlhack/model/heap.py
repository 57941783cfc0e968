"""Keep freed memory in the process, so that the arrays of every training step reuse it.

    keep_freed_memory()      # once, before training (FusedSeq2seq does it when made;
                             # dlhack train for every model, unless --no-keep-memory)
    env.update(kept_memory_environment())   # the same for a child process, from its start
    kernel_usage()           # (seconds in the kernel, page faults, CPU seconds) so far

A training step allocates, fills and frees its activations and gradients: some hundred MB of
arrays, the same sizes every step. glibc's ``malloc`` maps each large block fresh from the
kernel and, once freed, hands it (or the top of its heap) back; the next step then pays a page
fault for every 4 KiB it touches again (about 10,000 faults and 30 ms of system time per step
of the 256-unit, 3-layer translator, ``dlhack bench model`` measures it). Raising the mmap and
trim thresholds makes glibc keep those blocks for reuse.

Data parallelism makes it worse. One process frees last step's gradients as the next step
starts, just before forward needs as much memory again. The multi-node optimizer frees them in
the middle of the step, all at once, when each ``param.grad`` becomes its piece of the mean
(``parallel.communicator.unpack``): the top of the heap is free, glibc gives it back, and every
phase of the next step faults it in again. ``dlhack train --profile`` prints each rank's kernel
time and page faults per step, ``step_profile.verdict`` names the cause when the kernel takes a
large share of a rank's CPU time, and lesson 6 (f5) measures it with ``dlhack train
--no-keep-memory``.

Costs: the process's resident memory stays near its peak after training instead of shrinking;
the peak itself is unchanged. A no-op (returning False) where the C library is not glibc.
"""
import ctypes
import ctypes.util
import resource

M_TRIM_THRESHOLD, M_MMAP_THRESHOLD = -1, -3  # mallopt's parameter numbers (malloc.h)
MMAP_THRESHOLD = 32 << 20  # bytes: blocks up to this size come from the heap
TRIM_THRESHOLD = 1 << 30   # bytes: free heap kept before glibc gives any back


def keep_freed_memory(mmap_threshold=MMAP_THRESHOLD, trim_threshold=TRIM_THRESHOLD):
    """Serve blocks up to ``mmap_threshold`` bytes from the heap and keep up to
    ``trim_threshold`` bytes of free heap; returns whether the C library took both."""
    try:
        mallopt = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").mallopt
    except (OSError, AttributeError):
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return bool(mallopt(M_MMAP_THRESHOLD, mmap_threshold)) and \
        bool(mallopt(M_TRIM_THRESHOLD, trim_threshold))


def kept_memory_environment():
    """The environment variables that make glibc keep freed memory in a child process from
    its first allocation, as ``keep_freed_memory`` does in this one (mallopt(3) names them:
    the trailing underscore is part of the name). For a program that does not call it itself,
    such as the lesson scripts that ``lessons/scripts/03_chainermn/speedup.py`` times: where
    the top of a heap happens to lie then no longer decides how many pages each step faults."""
    return {"MALLOC_MMAP_THRESHOLD_": str(MMAP_THRESHOLD),
            "MALLOC_TRIM_THRESHOLD_": str(TRIM_THRESHOLD)}


def kernel_usage():
    """``(seconds, faults, cpu)``: this process's time in the kernel so far, its minor page
    faults (pages the kernel had to find and clear, without reading a disk), and its CPU time
    in all (kernel and user): the share of the kernel in it does not depend on how many other
    processes share the cores, as a share of the wall-clock time does."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_stime, usage.ru_minflt, usage.ru_stime + usage.ru_utime
