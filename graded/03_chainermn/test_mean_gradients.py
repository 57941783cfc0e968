"""Exercise 1 of lab 03: ``mean_gradients(comm, model)``, every gradient averaged over ranks.

Every rank's gradients, and its weights, differ (drawn from a seed chosen afresh at each
grading, printed when the test fails), so that a rank which keeps its own gradient, a mean over
some ranks only, or weights averaged too all show.
"""
import numpy as np
import pytest
from labtools import compare
from mnlab import LabComm, drawn, make_mlp


def set_gradients(model, rank, seed):
    """Rank-dependent gradients, reproducible from the rank and the seed alone."""
    for i, (_, param) in enumerate(sorted(model.namedparams())):
        rng = np.random.default_rng([seed, rank, i])
        param.grad = rng.standard_normal(param.shape).astype(param.dtype)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_mean_matches_serial(submission, comm):
    """Every gradient becomes the mean over ranks; the weights are left alone."""
    seed = drawn(comm, 0, 2 ** 31)
    model = make_mlp()
    for param in model.params():  # other weights on every rank: averaging them would show
        param.array[...] += 0.25 * comm.rank
    set_gradients(model, comm.rank, seed)
    mine = {name: param.grad.copy() for name, param in model.namedparams()}
    weights = {name: param.array.copy() for name, param in model.namedparams()}
    submission.mean_gradients(LabComm(comm), model)

    want = {}
    for rank in range(comm.size):  # the serial mean, from every rank's gradients rebuilt here
        other = make_mlp()
        set_gradients(other, rank, seed)
        for name, param in other.namedparams():
            want[name] = want.get(name, 0) + param.grad / comm.size
    case = f" (gradients drawn with seed {seed})"
    for name, param in sorted(model.namedparams()):
        problem = compare(param.grad, want[name], name=f"the gradient of {name}", rtol=1e-10)
        if problem and isinstance(param.grad, np.ndarray) and param.grad.shape == want[name].shape:
            if np.allclose(param.grad, want[name] * comm.size):
                problem += ": it is the sum over the ranks; the mean is the sum divided by comm.size"
            elif np.allclose(param.grad, want[name] / comm.size):
                problem += (": it is the mean divided by comm.size once more: divide the sum by "
                            "comm.size once")
            elif np.array_equal(param.grad, mine[name]):
                problem += ": it is still this rank's own gradient, never combined with the others"
            else:
                problem += (": it is not the mean over all the ranks; every rank must end with "
                            "the same mean (Allreduce, then divide by comm.size, on every rank)")
        assert problem is None, problem + case
        assert np.array_equal(param.array, weights[name]), (
            f"mean_gradients changed the weights of {name} (each rank has its own here): "
            f"average param.grad, leave param.array alone{case}")
