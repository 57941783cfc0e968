"""Exercise 2 of lab 02: ``allreduce_ring(comm, x)``, reduce-scatter then allgather on a ring.

The lengths are chosen so that every rank count divides the first (12) and none the others.
"""
import numpy as np
import pytest
from collectives import PointToPointComm, chunk_hint, rank_data, serial_sum, sum_hint
from labtools import compare


def ring_problem(submission, comm, shape, dtype=np.float64):
    x = rank_data(comm.rank, shape, dtype)
    before = x.copy()
    got = submission.allreduce_ring(PointToPointComm(comm), x)
    want = serial_sum(comm.size, shape, dtype)
    problem = compare(got, want, rtol=1e-5)
    if problem is None and not np.array_equal(x, before):
        problem = "allreduce_ring changed its input x: work on a copy"
    return problem and problem + sum_hint(got, want, before, comm.size)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)
def test_sum_matches_serial(submission, comm):
    """Every rank gets the serial sum of a 12-element array."""
    problem = ring_problem(submission, comm, (12,))
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=10)
def test_length_not_divisible(submission, comm):
    """A (2, 5) float32 array: 10 elements do not divide by 3 or 4 ranks."""
    problem = ring_problem(submission, comm, (2, 5), np.float32)
    assert problem is None, problem + chunk_hint(10, comm.size)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=10)
def test_smaller_than_rank_count(submission, comm):
    """A 2-element array at 3 and 4 ranks: some chunks are empty."""
    problem = ring_problem(submission, comm, (2,))
    assert problem is None, problem + chunk_hint(2, comm.size)
