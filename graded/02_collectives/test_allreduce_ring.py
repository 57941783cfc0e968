"""Exercise 2 of lab 02: ``allreduce_ring(comm, x)``, reduce-scatter then allgather on a ring.

Each test has two halves: ``test_NAME`` runs in every rank and hands the grader what the
learner's function returned (``observe``); ``check_NAME`` runs in the grader, where no learner
code ever ran, and decides on the result and on the traffic the grader's MPI shim saw (only to
the right neighbour, 2 (size - 1) messages, each a chunk of about n / size elements), and on
the values those messages carried (ringvalues: partial sums of the ranks to the sender's left in
reduce-scatter, slices of the sum in allgather). A right sum made some other way (through rank 0,
or by MPI's own allreduce) earns nothing here, whatever messages go round beside it. The lengths
are chosen so that every rank count divides the first (12) and none the others.
"""
import numpy as np
import pytest
from collectives import (
    PointToPointComm,
    chunk_hint,
    rank_data,
    ring_traffic_problem,
    sent_of,
    serial_sum,
    sum_hint,
)
from labtools import compare
from ringvalues import collectives_problem, ring_values_problem


def observe_ring(submission, comm, observe, shape, dtype=np.float64):
    x = rank_data(comm.rank, shape, dtype)
    got = submission.allreduce_ring(PointToPointComm(comm), x)
    observe(got=got, x=x)


def ring_problem(obs, run, shape, dtype=np.float64):
    got, x, before = obs["got"], obs["x"], rank_data(run.rank, shape, dtype)
    want = serial_sum(run.size, shape, dtype)
    problem = compare(got, want, rtol=1e-5)
    if problem:
        return problem + sum_hint(got, want, before, run.size) + chunk_hint(before.size, run.size)
    if not (isinstance(x, np.ndarray) and np.array_equal(x, before)):
        return "allreduce_ring changed its input x: work on a copy"
    sent = sent_of(run.traffic, before.itemsize)
    arrays = [rank_data(r, shape, dtype) for r in range(run.size)]
    return (ring_traffic_problem(sent, run.rank, run.size, before.size)
            or ring_values_problem(run.traffic, run.rank, arrays, dtype)
            or collectives_problem(run.traffic, run.rank))


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)
def test_sum_matches_serial(submission, comm, observe):
    """A 12-element array: every rank gets the serial sum, in 2 (size - 1) ring messages."""
    observe_ring(submission, comm, observe, (12,))


def check_sum_matches_serial(obs, run):
    return ring_problem(obs, run, (12,))


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=10)
def test_length_not_divisible(submission, comm, observe):
    """A (2, 5) float32 array: 10 elements do not divide by 3 or 4 ranks."""
    observe_ring(submission, comm, observe, (2, 5), np.float32)


def check_length_not_divisible(obs, run):
    return ring_problem(obs, run, (2, 5), np.float32)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=10)
def test_smaller_than_rank_count(submission, comm, observe):
    """A 2-element array at 3 and 4 ranks: some chunks are empty, the ring still turns."""
    observe_ring(submission, comm, observe, (2,))


def check_smaller_than_rank_count(obs, run):
    return ring_problem(obs, run, (2,))
