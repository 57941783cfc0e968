"""Exercise 1 of lab 02: ``allreduce_naive(comm, x)``, the sum through rank 0.

Each rank makes its array from a seed and its rank and hands the grader what the function
returned (``test_NAME``, in the rank). The grader (``check_NAME``) compares it with the serial
sum of every rank's array, and the messages its MPI shim saw with the naive algorithm's: every
rank sends to rank 0, rank 0 sends the sum back to each.
"""
import numpy as np
import pytest
from collectives import (
    PointToPointComm,
    naive_traffic_problem,
    rank_data,
    sent_of,
    serial_sum,
    sum_hint,
)
from labtools import compare


def observe_naive(submission, comm, observe, shape, dtype=np.float64):
    x = rank_data(comm.rank, shape, dtype)
    got = submission.allreduce_naive(PointToPointComm(comm), x)
    observe(got=got, x=x)


def naive_problem(obs, run, shape, dtype=np.float64, exact=False):
    got, x, before = obs["got"], obs["x"], rank_data(run.rank, shape, dtype)
    want = serial_sum(run.size, shape, dtype)
    problem = compare(got, want, rtol=0 if exact else 1e-6, atol=0 if exact else 1e-9)
    if problem:
        return problem + sum_hint(got, want, before, run.size)
    if not (isinstance(x, np.ndarray) and np.array_equal(x, before)):
        return "allreduce_naive changed its input x: add into a copy"
    sent = sent_of(run.traffic, before.itemsize)
    return naive_traffic_problem(sent, run.rank, run.size, before.size)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)
def test_sum_matches_serial(submission, comm, observe):
    """Every rank gets the serial sum through rank 0, and its input is left alone."""
    observe_naive(submission, comm, observe, (7,))


def check_sum_matches_serial(obs, run):
    return naive_problem(obs, run, (7,))


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=10)
def test_any_shape_and_dtype(submission, comm, observe):
    """A 2-D int32 array comes back with its shape and dtype."""
    observe_naive(submission, comm, observe, (3, 5), np.int32)


def check_any_shape_and_dtype(obs, run):
    return naive_problem(obs, run, (3, 5), np.int32, exact=True)
