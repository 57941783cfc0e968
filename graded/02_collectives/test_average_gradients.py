"""Exercise 3 of lab 02: ``average_gradients(comm, grads)``, the mean of a list of arrays with
one allreduce on one flat buffer."""
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
def test_mean_matches_serial(submission, comm):
    """Every rank gets the serial mean of each gradient, with its shape and dtype."""
    got = submission.average_gradients(PointToPointComm(comm), grads_of(comm.rank))
    assert isinstance(got, (list, tuple)) and len(got) == len(SHAPES), (
        f"expected a list of {len(SHAPES)} arrays, one per gradient; got {type(got).__name__}"
        + (f" of length {len(got)}" if isinstance(got, (list, tuple)) else ""))
    for i, (g, want) in enumerate(zip(got, serial_mean(comm.size))):
        problem = compare(g, want, name=f"gradient {i}", rtol=1e-5, atol=1e-6)
        if problem and comm.size > 1 and isinstance(g, np.ndarray) and g.shape == want.shape \
                and np.allclose(g, want * comm.size, rtol=1e-5, atol=1e-6):
            problem += (": it equals the sum over the ranks; "
                        "the mean is the sum divided by comm.size")
        assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=10)
def test_one_flat_buffer(submission, comm):
    """One allreduce through comm for all gradients: 1 to 2 (size - 1) sends per rank."""
    p2p = PointToPointComm(comm)
    submission.average_gradients(p2p, grads_of(comm.rank))
    limit = 2 * (comm.size - 1)
    assert p2p.sends, (
        "average_gradients sent no message through comm: reduce the flat buffer with your "
        "allreduce_ring(comm, ...), not with MPI's own allreduce or a communicator of your own")
    assert p2p.sends <= limit, (
        f"this rank sent {p2p.sends} messages, but one allreduce needs at most {limit}: pack every "
        f"gradient into one flat buffer (np.concatenate of np.ravel) and reduce it once")
