"""Exercise 1 of lab 02: ``allreduce_naive(comm, x)``, the sum through rank 0.

Each rank makes its array from a seed and its rank; each checks its result against the serial
sum of every rank's array, computed locally from the same seeds, and its messages against the
naive algorithm's: every rank sends to rank 0, rank 0 sends the sum back to each.
"""
import numpy as np
import pytest
from collectives import PointToPointComm, naive_traffic_problem, rank_data, serial_sum, sum_hint
from labtools import compare


def naive_problem(submission, comm, shape, dtype=np.float64, exact=False):
    x = rank_data(comm.rank, shape, dtype)
    before = x.copy()
    p2p = PointToPointComm(comm)
    got = submission.allreduce_naive(p2p, x)
    want = serial_sum(comm.size, shape, dtype)
    problem = compare(got, want, rtol=0 if exact else 1e-6, atol=0 if exact else 1e-9)
    if problem:
        return problem + sum_hint(got, want, before, comm.size)
    if not np.array_equal(x, before):
        return "allreduce_naive changed its input x: add into a copy"
    return naive_traffic_problem(p2p.sent, comm.rank, comm.size, x.size)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)
def test_sum_matches_serial(submission, comm):
    """Every rank gets the serial sum through rank 0, and its input is left alone."""
    problem = naive_problem(submission, comm, (7,))
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=10)
def test_any_shape_and_dtype(submission, comm):
    """A 2-D int32 array comes back with its shape and dtype."""
    problem = naive_problem(submission, comm, (3, 5), np.int32, exact=True)
    assert problem is None, problem
