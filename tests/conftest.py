"""Fixtures for every room; what tests import is in tests/support.py.

The whole session runs in the course's environment (``support.course_env``: one BLAS thread
per rank, this environment's mpiexec first on PATH), so every job a test starts inherits it.

MPI tests use pytest-isolate-mpi: each ``@pytest.mark.mpi(ranks=[...], timeout=...)`` test runs
in its own ``mpiexec -n RANKS`` with that timeout. A rank that raises ends the whole job
(``python -m mpi4py`` calls ``MPI_Abort``), so a failure never leaves the others waiting; to
report every rank's view, tests run their collectives first and assert afterwards.

Fixtures: ``mpi_comm`` (a duplicate of COMM_WORLD for one test), ``enja_dir`` (the real corpus),
``scripts`` (the small broken MPI scripts of tests/tools/scripts), ``leftovers`` (what a job
left running), and, for every test, ``same_random_numbers`` (a seeded global random state).
"""
import os
from pathlib import Path

import pytest

from tests import support

os.environ.update(support.course_env())
# Test jobs run up to 4 ranks on 2 cores: a rank waiting for a message should yield its core
# to the ranks that are computing instead of spinning on it (MPICH's heavy yield).
os.environ.setdefault("MPICH_ENABLE_HEAVY_YIELD", "1")


def pytest_configure(config):
    """Inside an MPI test's own mpiexec the outer session has already chosen the test by its
    node id; pyproject's ``-m 'not slow'`` must not deselect it there (``make test-slow``)."""
    if os.environ.get("PYTEST_ISOLATE_MPI_IS_FORKED"):
        config.option.markexpr = ""


# ``make test`` runs two pytest-xdist workers, and hands them whole test files, so that a
# module's fixtures are built once, on one worker. The cluster and browser files are one unit
# between them: they share what a second worker must not build at the same time (the course
# environment under ROOT/.site, the machine's users, a private Slurm). The longest units go
# first, so that neither worker is left alone with one of them at the end.
ONE_UNIT = ("cluster", "browser")
LONGEST = ("course/test_notebooks.py", "cluster", "browser", "grade/test_mutants.py")


def work_unit(nodeid):
    """The unit of work a test belongs to: its file, or "slurm" for the ``ONE_UNIT`` rooms."""
    path = nodeid.split("::")[0]
    return "slurm" if path.split("/")[1] in ONE_UNIT else path


@pytest.hookimpl(optionalhook=True)
def pytest_xdist_make_scheduler(config, log):
    from xdist.scheduler import LoadScopeScheduling

    class ByWorkUnit(LoadScopeScheduling):
        def _split_scope(self, nodeid):
            return work_unit(nodeid)

    return ByWorkUnit(config, log)


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_logreport(report):
    """pytest-isolate-mpi names each rank's report ``NODEID[rank=N]`` (the rank is also in its
    location); an xdist worker insists that a report names the test it runs, so there the
    report keeps the test's own id."""
    worker = os.environ.get("PYTEST_XDIST_WORKER") and not os.environ.get("PYTEST_ISOLATE_MPI_IS_FORKED")
    if worker and "[rank=" in report.nodeid:
        report.nodeid = report.nodeid.rsplit("[rank=", 1)[0]


def pytest_collection_modifyitems(config, items):
    """Under xdist, the ``LONGEST`` files first (a stable sort: the rest keep their order)."""
    if getattr(config.option, "numprocesses", None):
        def rank(item):
            room = item.nodeid.split("::")[0].removeprefix("tests/")
            return next((i for i, p in enumerate(LONGEST) if room.startswith(p)), len(LONGEST))
        items.sort(key=rank)


@pytest.fixture(autouse=True)
def same_random_numbers():
    """Every test starts from the same global random state, whatever ran before it on its
    worker: Chainer's initializers and iterators draw from numpy's, so a test that builds a
    link without a seed would otherwise see new weights on every run."""
    import random

    import numpy

    random.seed(0)
    numpy.random.seed(0)


@pytest.fixture
def mpi_comm():
    """A fresh duplicate of ``MPI.COMM_WORLD`` for one test (stray messages cannot leak
    between tests), freed afterwards."""
    from mpi4py import MPI

    mpi_comm = MPI.COMM_WORLD.Dup()
    yield mpi_comm
    mpi_comm.Free()


@pytest.fixture
def enja_dir():
    """The real small_parallel_enja corpus beside the checkout; skipped when absent."""
    path = Path(os.environ.get("DLHACK_ENJA", support.SHARED_ENJA))
    if not (path / "train.en").exists():
        pytest.skip(f"small_parallel_enja not found at {path}")
    return path


@pytest.fixture(scope="session")
def scripts():
    """The folder of small broken MPI scripts that ``dlhack run`` is tried on."""
    return support.SCRIPTS


@pytest.fixture
def leftovers():
    """``leftovers(*texts, below=None, wait=0)``: what a job left running, as "PID COMMAND"
    (``support.left_running``): processes naming one of ``texts`` in their command line or
    working directory, or descending from the pid ``below`` (``os.getpid()``: anything this
    test started), after waiting up to ``wait`` seconds for them to go; [] when nothing."""
    return support.left_running
