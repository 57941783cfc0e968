"""Exercise 1 of lab 02: ``allreduce_naive(comm, x)``, the sum through rank 0.

Each rank makes its array from a seed and its rank; each checks its result against the serial
sum of every rank's array, computed locally from the same seeds.
"""
import numpy as np
import pytest
from collectives import PointToPointComm, rank_data, serial_sum, sum_hint
from labtools import compare


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)
def test_sum_matches_serial(submission, comm):
    """Every rank gets the serial sum, and its input is left alone."""
    x = rank_data(comm.rank, (7,))
    before = x.copy()
    got = submission.allreduce_naive(PointToPointComm(comm), x)
    want = serial_sum(comm.size, (7,))
    problem = compare(got, want)
    assert problem is None, problem + sum_hint(got, want, before, comm.size)
    assert np.array_equal(x, before), "allreduce_naive changed its input x: add into a copy"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=10)
def test_any_shape_and_dtype(submission, comm):
    """A 2-D int32 array comes back with its shape and dtype."""
    x = rank_data(comm.rank, (3, 5), np.int32)
    got = submission.allreduce_naive(PointToPointComm(comm), x)
    want = serial_sum(comm.size, (3, 5), np.int32)
    problem = compare(got, want, rtol=0, atol=0)
    assert problem is None, problem + sum_hint(got, want, x, comm.size)
