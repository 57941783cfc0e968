"""Exercise 3 of lab 02: ``average_gradients(comm, grads)``, the mean of a list of arrays with
one allreduce on one flat buffer. The ranks observe what it returned; the grader checks it
against the serial mean, and counts the sends its MPI shim saw."""
import numpy as np
import pytest
from collectives import PointToPointComm, rank_data
from labtools import compare

SHAPES = [(3, 4), (5,), (2, 1, 3)]  # a weight, a bias, something oddly shaped


def grads_of(rank):
    return [rank_data(rank * 10 + i, shape, np.float32) for i, shape in enumerate(SHAPES)]


def serial_mean(size):
    return [serial_sum_of(size, i, shape) / np.float32(size) for i, shape in enumerate(SHAPES)]


def serial_sum_of(size, i, shape):
    total = np.sum([grads_of(r)[i].astype(np.float64) for r in range(size)], axis=0)
    return total.astype(np.float32)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3], timeout=10)
def test_mean_matches_serial(submission, comm, observe):
    """Every rank gets the serial mean of each gradient, with its shape and dtype."""
    observe(got=submission.average_gradients(PointToPointComm(comm), grads_of(comm.rank)))


def check_mean_matches_serial(obs, run):
    got = obs["got"]
    if not isinstance(got, list) or len(got) != len(SHAPES):
        kind = getattr(got, "type_name", type(got).__name__)
        return (f"expected a list of {len(SHAPES)} arrays, one per gradient; got {kind}"
                + (f" of length {len(got)}" if isinstance(got, list) else ""))
    for i, (g, want) in enumerate(zip(got, serial_mean(run.size))):
        problem = compare(g, want, name=f"gradient {i}", rtol=1e-5, atol=1e-6)
        if problem and run.size > 1 and isinstance(g, np.ndarray) and g.shape == want.shape \
                and np.allclose(g, want * run.size, rtol=1e-5, atol=1e-6):
            problem += (": it equals the sum over the ranks; "
                        "the mean is the sum divided by comm.size")
        if problem:
            return problem
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=10)
def test_one_flat_buffer(submission, comm, observe):
    """One allreduce through comm for all gradients: 1 to 2 (size - 1) sends per rank."""
    submission.average_gradients(PointToPointComm(comm), grads_of(comm.rank))
    observe()


def check_one_flat_buffer(obs, run):
    sends, limit = len(run.traffic.sends), 2 * (run.size - 1)
    if not sends:
        return ("average_gradients sent no message through comm: reduce the flat buffer with "
                "your allreduce_ring(comm, ...), not with MPI's own allreduce or a communicator "
                "of your own")
    if sends > limit:
        return (f"this rank sent {sends} messages, but one allreduce needs at most {limit}: pack "
                f"every gradient into one flat buffer (np.concatenate of np.ravel) and reduce "
                f"it once")
    return None
