"""Exercise 1 of lab 07: ``split_encode(model, comm, xs)``, the transfer between the halves.

Each rank builds the split translator from a seed and runs one batch through it (a fixed batch,
then a drawn one, in which any id may occur, 0 included); it observes rank 1's loss, every
parameter's gradient and the mode rank 0 encoded in. The grader builds the whole translator with
the same weights in its own process and compares.
"""
import numpy as np
import pytest
from lab07 import LAYERS, N_SRC, N_TGT, UNITS, batch, models
from labtools import drawn

PAD = -1  # dlhack.model.seq2seq.PAD


def cases(seed):
    return [(0, 5), (seed, 2 + seed % 7)]


def observe_step(submission, comm, data, n):
    """One forward and backward of the learner's split model: what the grader checks."""
    _, split = models(submission.split_encode, comm)
    xs, ys = batch(data, n)
    out = split(xs, ys)
    seen = {"returned": [type(out).__name__, list(getattr(out, "shape", ()) or ())]}
    if comm.rank == 0 and returned_problem(*seen["returned"]):
        # Its backward() would raise inside Chainer, and that error would hide the cause.
        pytest.fail(returned_problem(*seen["returned"]), pytrace=False)
    split.cleargrads()
    out.backward()
    seen["grads"] = {name: (None if p.grad is None else np.asarray(p.grad))
                     for name, p in split.namedparams()}
    seen["loss"] = float(out.array) if comm.rank == 1 else None
    seen["train_modes"] = [train for train, _ in split.encoded_in]
    return seen


def reference(data, n, stage):
    """The whole translator's loss and the gradients of this stage's parameters."""
    from dlhack.model.seq2seq import Seq2seq

    np.random.seed(1)  # as lab07.models builds it
    whole = Seq2seq(N_SRC, N_TGT, UNITS, LAYERS, dropout=0.0)
    xs, ys = batch(data, n)
    loss = whole(xs, ys)
    whole.cleargrads()
    loss.backward()
    return float(loss.array), {name: p.grad for name, p in whole.namedparams()}


def returned_problem(kind, shape):
    """What is wrong with rank 0's return value (its type name and shape), or None."""
    if kind != "Variable" or shape != [0]:
        return (f"on rank 0, split_encode should return the empty delegate variable that send() "
                f"returns (the training loop calls its backward(), which receives the gradients); "
                f"it returned {kind} {tuple(shape)}")
    return None


def encoder_problem(seen):
    problem = returned_problem(*seen["returned"])
    if problem:
        return problem
    if not seen["train_modes"]:
        return "rank 0 never encoded: call model.encode(xs) there"
    if not all(seen["train_modes"]):
        return ("rank 0 encoded in test mode (chainer.config.train False): a training step keeps "
                "train mode, or dropout would be off in the encoder only")
    return None


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2], timeout=60)
def test_the_loss_equals_the_single_process_loss(submission, comm, observe, seed):
    """Rank 1 computes the single-process loss; rank 0 returns the delegate variable."""
    observe(steps=[observe_step(submission, comm, data, n) for data, n in cases(seed)])


def check_the_loss_equals_the_single_process_loss(obs, run):
    for k, (seen, (data, n)) in enumerate(zip(obs["steps"], cases(run.seed))):
        if run.rank == 0:
            problem = encoder_problem(seen)
            if problem:
                return problem
            continue
        want, _ = reference(data, n, "decoder")
        got = seen["loss"]
        if got is None or abs(got - want) > 1e-5 * abs(want):
            return (f"rank 1's loss is {got}, the single-process model's {want:.6f}: check what "
                    f"rank 0 sends (hy, cy and enc, in that order) and the mask (True where xs has "
                    f"a token: any id but PAD, {PAD}, id 0 included)" + (drawn(run.seed) if k else ""))
    return None


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2], timeout=60)
def test_every_gradient_equals_the_single_process_gradient(submission, comm, observe, seed):
    """Each rank's parameters get the single-process gradients, the encoder's included."""
    observe(steps=[observe_step(submission, comm, data, n) for data, n in cases(seed)])


def check_every_gradient_equals_the_single_process_gradient(obs, run):
    for k, (seen, (data, n)) in enumerate(zip(obs["steps"], cases(run.seed))):
        _, want = reference(data, n, None)
        grads = seen["grads"]
        missing = [name for name, g in grads.items() if g is None]
        if missing:
            return (f"no gradient reached {', '.join(missing[:3])}: rank 0 must send the "
                    f"variables hy, cy, enc themselves (not their .array) and return send()'s "
                    f"delegate, whose backward() receives their gradients from rank 1")
        for name, grad in grads.items():
            if name not in want or not isinstance(grad, np.ndarray):
                return f"the gradient of {name} is not an array of the model's parameters"
            if not np.allclose(grad, want[name], rtol=1e-4, atol=1e-6):
                return (f"the gradient of {name} differs from the single-process one (largest "
                        f"difference {np.abs(grad - want[name]).max():.3g})"
                        + (drawn(run.seed) if k else ""))
    return None
