"""Fixtures for the ``dlhack.parallel`` tests.

MPI tests carry ``@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=...)``: pytest-isolate-mpi runs
each in its own ``mpiexec -n RANKS`` with that timeout. A rank that raises ends the whole job
(``python -m mpi4py`` calls ``MPI_Abort``), so a failure never leaves the others waiting. To
report every rank's view, tests run their collectives first and assert afterwards.
"""
import os

import pytest

# One BLAS thread per rank: 4 ranks share 2 cores. Set here so the mpiexec children inherit it.
os.environ.setdefault("OMP_NUM_THREADS", "1")
os.environ.setdefault("OPENBLAS_NUM_THREADS", "1")


@pytest.fixture
def mpi_comm():
    """A fresh duplicate of ``MPI.COMM_WORLD`` for one test, freed afterwards."""
    from mpi4py import MPI

    mpi_comm = MPI.COMM_WORLD.Dup()
    yield mpi_comm
    mpi_comm.Free()
