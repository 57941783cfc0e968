"""Exercise 2 of lab 02: ``allreduce_ring(comm, x)``, reduce-scatter then allgather on a ring.

Graded on the result and on the traffic: every test records the messages each rank sends
through ``comm`` and checks them against the ring's (only to the right neighbour, 2 (size - 1)
messages, each a chunk of about n / size elements). A right sum made some other way (through
rank 0, or by MPI's own allreduce) earns nothing here. The lengths are chosen so that every rank
count divides the first (12) and none the others.
"""
import numpy as np
import pytest
from collectives import (
    PointToPointComm,
    chunk_hint,
    rank_data,
    ring_traffic_problem,
    serial_sum,
    sum_hint,
)
from labtools import compare


def ring_problem(submission, comm, shape, dtype=np.float64):
    x = rank_data(comm.rank, shape, dtype)
    before = x.copy()
    p2p = PointToPointComm(comm)
    got = submission.allreduce_ring(p2p, x)
    want = serial_sum(comm.size, shape, dtype)
    problem = compare(got, want, rtol=1e-5)
    if problem:
        return problem + sum_hint(got, want, before, comm.size) + chunk_hint(x.size, comm.size)
    if not np.array_equal(x, before):
        return "allreduce_ring changed its input x: work on a copy"
    return ring_traffic_problem(p2p.sent, comm.rank, comm.size, x.size)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)
def test_sum_matches_serial(submission, comm):
    """A 12-element array: every rank gets the serial sum, in 2 (size - 1) ring messages."""
    problem = ring_problem(submission, comm, (12,))
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=10)
def test_length_not_divisible(submission, comm):
    """A (2, 5) float32 array: 10 elements do not divide by 3 or 4 ranks."""
    problem = ring_problem(submission, comm, (2, 5), np.float32)
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=10)
def test_smaller_than_rank_count(submission, comm):
    """A 2-element array at 3 and 4 ranks: some chunks are empty, the ring still turns."""
    problem = ring_problem(submission, comm, (2,))
    assert problem is None, problem
