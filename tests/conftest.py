"""Shared test fixtures. MPI tests use pytest-isolate-mpi: each
``@pytest.mark.mpi(ranks=[...], timeout=...)`` test runs in its own mpiexec.

Fixtures for more than one room: ``enja_dir`` (the real corpus), ``course_env`` (what `make test`
sets), ``scripts`` (the small broken MPI scripts of tests/tools/scripts), and ``leftovers`` (what
a job left running).
"""
import os
import sys
import time
from pathlib import Path

import psutil
import pytest


def pytest_configure(config):
    """Inside an MPI test's own mpiexec the outer session has already chosen the test by its
    node id; pyproject's ``-m 'not slow'`` must not deselect it there (``make test-slow``)."""
    if os.environ.get("PYTEST_ISOLATE_MPI_IS_FORKED"):
        config.option.markexpr = ""

# Test jobs run up to 4 ranks on 2 cores: a rank waiting for a message should yield its core
# to the ranks that are computing instead of spinning on it (MPICH's heavy yield).
os.environ.setdefault("MPICH_ENABLE_HEAVY_YIELD", "1")

ROOT = Path(__file__).resolve().parents[1]
SHARED_ENJA = ROOT.parent / "shared" / "data" / "small_parallel_enja"


@pytest.fixture
def enja_dir():
    """The real small_parallel_enja corpus beside the checkout; skipped when absent."""
    path = Path(os.environ.get("DLHACK_ENJA", SHARED_ENJA))
    if not (path / "train.en").exists():
        pytest.skip(f"small_parallel_enja not found at {path}")
    return path


@pytest.fixture(scope="module")
def course_env():
    """What `make test` sets: this environment's mpiexec first, one BLAS thread per rank.

    Module-scoped, so that module-scoped fixtures which run a job see it too; a room's conftest
    makes it autouse where every test runs jobs (tests/jobs, tests/tools).
    """
    with pytest.MonkeyPatch.context() as patch:
        bin_dir = os.path.dirname(sys.executable)
        patch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
        patch.setenv("OMP_NUM_THREADS", "1")
        patch.setenv("OPENBLAS_NUM_THREADS", "1")
        yield


@pytest.fixture(scope="session")
def scripts():
    """The folder of small broken MPI scripts that ``dlhack run`` is tried on."""
    return ROOT / "tests" / "tools" / "scripts"


def _alive(texts, below):
    """``"PID COMMAND LINE CWD"`` of each live process but this one, zombies aside, that names
    one of ``texts`` in its command line or working directory, or is a descendant of ``below``."""
    found = {}
    if below is not None:
        for proc in psutil.Process(below).children(recursive=True):
            try:
                if proc.status() != psutil.STATUS_ZOMBIE:
                    found[proc.pid] = f"{proc.pid} {' '.join(proc.cmdline())}"
            except psutil.NoSuchProcess:
                pass
    for proc in psutil.process_iter(["pid", "cmdline", "cwd", "status"]):
        text = " ".join(proc.info["cmdline"] or []) + " " + (proc.info["cwd"] or "")
        if (proc.info["pid"] != os.getpid() and proc.info["status"] != psutil.STATUS_ZOMBIE
                and any(t in text for t in texts)):
            found[proc.info["pid"]] = f"{proc.info['pid']} {text}"
    return sorted(found.values())


@pytest.fixture
def leftovers():
    """``leftovers(*texts, below=None, wait=0)``: what a job left running, as "PID COMMAND".

    A process counts when its command line or working directory names one of ``texts`` (a run
    folder, a script's path, ``"sleep 317.27"``), or when it descends from the pid ``below``
    (``os.getpid()``: anything this test started). Waits up to ``wait`` seconds for them to go
    (a SIGKILLed process takes a moment to disappear); returns what is left, [] when nothing.
    """

    def find(*texts, below=None, wait=0.0):
        end = time.monotonic() + wait
        while True:
            left = _alive([str(t) for t in texts], below)
            if not left or time.monotonic() >= end:
                return left
            time.sleep(0.1)

    return find
