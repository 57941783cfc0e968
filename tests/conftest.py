"""Shared test fixtures. MPI tests use pytest-isolate-mpi: each
``@pytest.mark.mpi(ranks=[...], timeout=...)`` test runs in its own mpiexec."""
import os
from pathlib import Path

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
