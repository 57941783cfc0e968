"""Exercise 3 of lab 02: ``average_gradients(comm, grads)``, the mean of a list of arrays with
one allreduce on one flat buffer. The ranks observe what it returned; the grader checks it
against the serial mean, and counts the sends its MPI shim saw.

The gradients are drawn per run from the grader's seed: 4 to 6 arrays (never as many as the 1 to
3 ranks, so that dividing by their number is never the mean), of 1 to 3 dimensions (one a
matrix), float32 and float64 mixed (each must come back in its own dtype). A
failure names the drawn case.
"""
import numpy as np
import pytest
from collectives import PointToPointComm
from labtools import compare, drawn


def drawn_case(seed):
    """``[(shape, dtype)]``: 4 to 6 gradients, at least one float32 and one float64, and one
    weight matrix of at least two columns, first (so that its length is not its size)."""
    rng = np.random.default_rng([seed, 3])
    count = int(rng.integers(4, 7))
    shapes = [(int(rng.integers(1, 6)), int(rng.integers(2, 6)))]
    shapes += [tuple(int(d) for d in rng.integers(1, 6, size=int(rng.integers(1, 4))))
               for _ in range(count - 1)]
    kinds = [np.float32, np.float64] + [(np.float32, np.float64)[int(rng.integers(2))]
                                        for _ in range(count - 2)]
    return [(shape, kinds[i]) for shape, i in zip(shapes, rng.permutation(count))]


def grads_of(seed, rank):
    return [np.random.default_rng([seed, rank, i]).standard_normal(shape).astype(dtype)
            for i, (shape, dtype) in enumerate(drawn_case(seed))]


def serial_mean(seed, size):
    """Each gradient's mean over the ranks, summed in float64, in the gradient's own dtype."""
    every = [grads_of(seed, r) for r in range(size)]
    return [(np.sum([g[i].astype(np.float64) for g in every], axis=0) / size).astype(dtype)
            for i, (_, dtype) in enumerate(drawn_case(seed))]


def described(seed):
    case = drawn_case(seed)
    return (f" ({len(case)} gradients: "
            + ", ".join(f"{np.dtype(dtype).name} {shape}" for shape, dtype in case) + ")"
            + drawn(seed))


def mean_hint(got, want, size, count):
    if not (isinstance(got, np.ndarray) and got.shape == want.shape):
        return ""
    total = want.astype(np.float64) * size
    if size > 1 and np.allclose(got, total, rtol=1e-5, atol=1e-6):
        return ": it equals the sum over the ranks; the mean is the sum divided by comm.size"
    if np.allclose(got, total / count, rtol=1e-5, atol=1e-6):
        return (f": it equals the sum divided by the number of gradient arrays ({count}); the "
                f"mean over the ranks divides by comm.size ({size})")
    return ""


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3], timeout=10)
def test_mean_matches_serial(submission, comm, observe, seed):
    """Every rank gets the serial mean of each drawn gradient, with its shape and dtype."""
    observe(got=submission.average_gradients(PointToPointComm(comm), grads_of(seed, comm.rank)))


def check_mean_matches_serial(obs, run):
    got, wants = obs["got"], serial_mean(run.seed, run.size)
    if not isinstance(got, list) or len(got) != len(wants):
        kind = getattr(got, "type_name", type(got).__name__)
        return (f"expected a list of {len(wants)} arrays, one per gradient; got {kind}"
                + (f" of length {len(got)}" if isinstance(got, list) else "")
                + described(run.seed))
    for i, (g, want) in enumerate(zip(got, wants)):
        problem = compare(g, want, name=f"gradient {i}", rtol=1e-5, atol=1e-6)
        if problem:
            return (problem + mean_hint(g, want, run.size, len(wants))
                    + described(run.seed))
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2, 3], timeout=10)
def test_one_flat_buffer(submission, comm, observe, seed):
    """One allreduce through comm for all gradients: 1 to 2 (size - 1) sends per rank."""
    submission.average_gradients(PointToPointComm(comm), grads_of(seed, comm.rank))
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
                f"it once" + described(run.seed))
    return None
