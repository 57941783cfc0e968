"""Keeping freed memory for reuse (dlhack.model.heap): glibc takes the settings, from mallopt or
from the environment, and a large block freed and allocated again no longer costs fresh page
faults."""
import os
import subprocess
import sys

import pytest

from tests.support import ROOT

# In a fresh process (a test run may have called keep_freed_memory already): allocate, touch and
# free an 8 MiB block, then count the minor page faults of doing it again.
PROBE = """
import resource, sys
import numpy as np
from dlhack.model.heap import keep_freed_memory
took = keep_freed_memory() if sys.argv[1] == "keep" else None
faults = lambda: resource.getrusage(resource.RUSAGE_SELF).ru_minflt
block = np.ones(1 << 20); del block
before = faults()
block = np.ones(1 << 20); del block
print(took, faults() - before, (8 << 20) // resource.getpagesize())
"""


def probe(mode):
    from dlhack.model.heap import kept_memory_environment

    env = {k: v for k, v in os.environ.items() if not k.startswith("MALLOC_")}
    if mode == "environment":  # no mallopt call: the variables alone, read at the first malloc
        env.update(kept_memory_environment())
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True,
                         check=True, cwd=ROOT, env=env).stdout.split()
    return out[0], int(out[1]), int(out[2])


@pytest.mark.parametrize("mode", ["keep", "environment", "default"])
def test_freed_blocks_are_reused_without_page_faults(mode):
    took, faults, pages = probe(mode)
    if mode == "keep":
        assert took == "True"  # glibc: both settings taken
    if mode in ("keep", "environment"):
        assert faults < pages // 16, f"{faults} page faults for a block of {pages} pages"
    else:  # glibc's own thresholds: the block is given back and faulted in again, in part
        assert faults >= pages // 16, f"only {faults} faults without keep_freed_memory"


def test_a_c_library_without_mallopt_is_left_alone(monkeypatch):
    import ctypes

    from dlhack.model import heap

    class NoMallopt:  # macOS's C library has no mallopt
        pass

    monkeypatch.setattr(ctypes, "CDLL", lambda name: NoMallopt())
    assert heap.keep_freed_memory() is False


def test_kernel_usage_counts_the_pages_a_new_array_touches():
    import numpy as np

    from dlhack.model.heap import kernel_usage

    seconds, before, cpu = kernel_usage()
    block = np.empty(64 << 20, np.uint8)  # 64 MiB: pages of its own, whatever the settings
    block[::4096] = 1  # touch every page
    after_seconds, after, after_cpu = kernel_usage()
    assert after - before >= 32  # 16384 small pages, or 32 huge ones
    assert after_seconds >= seconds and after_cpu >= cpu and after_cpu >= after_seconds
