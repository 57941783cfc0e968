"""Fixtures for the tests of the mentors' tools (doctor, ``dlhack run``, ``%%mpiexec``)."""
import os
import sys
from pathlib import Path

import psutil
import pytest

SCRIPTS = Path(__file__).with_name("scripts")


@pytest.fixture(autouse=True, scope="module")
def course_env():
    """What `make test` sets: this environment's mpiexec first, one BLAS thread per rank.

    Module-scoped, so that module-scoped fixtures which run a job see it too.
    """
    with pytest.MonkeyPatch.context() as patch:
        bin_dir = os.path.dirname(sys.executable)
        patch.setenv("PATH", bin_dir + os.pathsep + os.environ.get("PATH", ""))
        patch.setenv("OMP_NUM_THREADS", "1")
        patch.setenv("OPENBLAS_NUM_THREADS", "1")
        yield


@pytest.fixture(scope="session")
def scripts():
    """The folder of small broken MPI scripts that the tests run."""
    return SCRIPTS


@pytest.fixture
def running():
    """``running(text)``: the live processes whose command line contains ``text``."""

    def find(text):
        found = []
        for proc in psutil.process_iter(["cmdline", "status"]):
            cmdline = " ".join(proc.info["cmdline"] or [])
            if text in cmdline and proc.info["status"] != psutil.STATUS_ZOMBIE:
                found.append(proc)
        return found

    return find
