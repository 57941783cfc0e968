"""Exercise 1 of lab 03: ``mean_gradients(comm, model)``, every gradient averaged over ranks.

Every rank's gradients, and its weights, differ (drawn from the grader's seed for the launch,
printed when the test fails), so that a rank which keeps its own gradient, a mean over some
ranks only, or weights averaged too all show. The rank observes the gradients and weights after
the call; the grader rebuilds every rank's gradients from the seed and decides.
"""
import numpy as np
import pytest
from labtools import compare
from mnlab import LabComm, make_mlp


def rank_model(rank, seed):
    """Rank ``rank``'s model: its own weights, and gradients drawn from ``(seed, rank)``."""
    model = make_mlp()
    for i, (_, param) in enumerate(sorted(model.namedparams())):
        param.array[...] += 0.25 * rank  # other weights on every rank: averaging them would show
        rng = np.random.default_rng([seed, rank, i])
        param.grad = rng.standard_normal(param.shape).astype(param.dtype)
    return model


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_mean_matches_serial(submission, comm, observe, seed):
    """Every gradient becomes the mean over ranks; the weights are left alone."""
    model = rank_model(comm.rank, seed)
    submission.mean_gradients(LabComm(comm), model)
    observe(grads={name: param.grad for name, param in model.namedparams()},
            weights={name: param.array for name, param in model.namedparams()})


def check_mean_matches_serial(obs, run):
    mine = dict(rank_model(run.rank, run.seed).namedparams())
    want = {}
    for rank in range(run.size):  # the serial mean, from every rank's gradients rebuilt here
        for name, param in rank_model(rank, run.seed).namedparams():
            want[name] = want.get(name, 0) + param.grad / run.size
    case = f" (gradients drawn with seed {run.seed})"
    grads, weights = obs["grads"], obs["weights"]
    for name in sorted(mine):
        got = grads.get(name) if isinstance(grads, dict) else None
        problem = compare(got, want[name], name=f"the gradient of {name}", rtol=1e-10)
        if problem and isinstance(got, np.ndarray) and got.shape == want[name].shape:
            if np.allclose(got, want[name] * run.size):
                problem += ": it is the sum over the ranks; the mean is the sum divided by comm.size"
            elif np.allclose(got, want[name] / run.size):
                problem += (": it is the mean divided by comm.size once more: divide the sum by "
                            "comm.size once")
            elif np.array_equal(got, mine[name].grad):
                problem += ": it is still this rank's own gradient, never combined with the others"
            else:
                problem += (": it is not the mean over all the ranks; every rank must end with "
                            "the same mean (Allreduce, then divide by comm.size, on every rank)")
        if problem:
            return problem + case
        if not np.array_equal(weights.get(name), mine[name].array):
            return (f"mean_gradients changed the weights of {name} (each rank has its own here): "
                    f"average param.grad, leave param.array alone{case}")
    return None
