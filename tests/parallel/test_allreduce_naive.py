"""The naive allreduce (dlhack.parallel.allreduce_naive) equals the serial sum, for awkward sizes
and every float dtype, with the same bits on every rank. (Its messages: test_costs.py.)"""
import pytest

from dlhack.parallel import allreduce_naive
from tests.parallel.sums import check_every_case


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_naive_matches_serial_sum(mpi_comm):
    failures = check_every_case(mpi_comm, allreduce_naive.allreduce)
    assert not failures, "\n".join(failures[:20])
