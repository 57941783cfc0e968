"""Exercise 1 of lab 03: ``mean_gradients(comm, model)``, every gradient averaged over ranks."""
import numpy as np
import pytest
from labtools import compare
from mnlab import LabComm, make_mlp


def set_gradients(model, rank):
    """Rank-dependent gradients, reproducible from the rank alone."""
    for i, (_, param) in enumerate(sorted(model.namedparams())):
        rng = np.random.default_rng([3, rank, i])
        param.grad = rng.standard_normal(param.shape).astype(param.dtype)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[3], timeout=60)
def test_mean_matches_serial(submission, comm):
    """Every gradient becomes the mean over ranks; the weights are left alone."""
    model = make_mlp()
    set_gradients(model, comm.rank)
    mine = {name: param.grad.copy() for name, param in model.namedparams()}
    weights = {name: param.array.copy() for name, param in model.namedparams()}
    submission.mean_gradients(LabComm(comm), model)

    want = {}
    for rank in range(comm.size):  # the serial mean, from every rank's gradients rebuilt here
        other = make_mlp()
        set_gradients(other, rank)
        for name, param in other.namedparams():
            want[name] = want.get(name, 0) + param.grad / comm.size
    for name, param in sorted(model.namedparams()):
        problem = compare(param.grad, want[name], name=f"the gradient of {name}", rtol=1e-10)
        if problem and isinstance(param.grad, np.ndarray) and param.grad.shape == want[name].shape:
            if np.allclose(param.grad, want[name] * comm.size):
                problem += ": it is the sum over the ranks; the mean is the sum divided by comm.size"
            elif np.array_equal(param.grad, mine[name]):
                problem += ": it is still this rank's own gradient, never combined with the others"
        assert problem is None, problem
        assert np.array_equal(param.array, weights[name]), (
            f"mean_gradients changed the weights of {name}: average param.grad, leave param.array")
