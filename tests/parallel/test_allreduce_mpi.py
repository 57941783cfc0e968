"""MPI's own allreduce (dlhack.parallel.allreduce_mpi) equals the serial sum, for awkward sizes and
every float dtype, also with an MPI that has no float16 type (before MPI 5)."""
import numpy as np
import pytest

from dlhack.parallel import allreduce_mpi
from tests.parallel.sums import check_allreduce, check_every_case, sizes


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_mpi_matches_serial_sum(mpi_comm, monkeypatch):
    # MPI may add in a different order on each rank: the same sum, not always the same bits.
    failures = check_every_case(mpi_comm, allreduce_mpi.allreduce, same_bits=False)
    # An MPI without MPI.FLOAT16_T: float16 is summed in float32.
    monkeypatch.setattr(allreduce_mpi, "HAS_FLOAT16", False)
    failures += [f"{f} (no FLOAT16_T)" for n, shape in sizes(mpi_comm.size)
                 for f in check_allreduce(mpi_comm, allreduce_mpi.allreduce, np.float16, n, shape,
                                          same_bits=False)]
    assert not failures, "\n".join(failures[:20])
