"""Exercise 1 of lab 01: ``decoder_loss(model, xs, ys)``, the training loss written step by step.

The ranks observe the answer's loss (and the gradients it gives), computed with a model whose
own loss, ``model(xs, ys)``, and whole-sequence decoder are switched off. The grader's check
compares them with the loss written step by step in translator.py (``reference_loss``) on the
same seeded weights and batch.
"""
import contextlib

import numpy as np
import pytest
from translator import (
    gradients,
    loss_observed,
    loss_problem,
    make_batch,
    make_model,
    reference_loss,
)

ONE_LAYER = [((5, 3, 7), (4, 1, 6)), ((2,), (1,))]  # batches of three and of one sentence


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_loss_matches_model(submission, observe):
    """On a batch of five sentences of different lengths, the loss equals the reference."""
    model = make_model(seed=0)
    xs, ys = make_batch(seed=0)
    observe(loss=loss_observed(submission.decoder_loss(model, xs, ys)))


def check_loss_matches_model(obs, run):
    xs, ys = make_batch(seed=0)
    return loss_problem(make_model(seed=0), xs, ys, obs["loss"])


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_gradients_match(submission, observe):
    """Every parameter gets the same gradient from your loss as from the reference loss."""
    xs, ys = make_batch(seed=1)
    model = make_model(seed=1)
    loss = submission.decoder_loss(model, xs, ys)
    observe(loss=loss_observed(loss))
    if loss_observed(loss)["kind"] == "Variable":
        observe(grads=gradients(model, loss))


def check_gradients_match(obs, run):
    xs, ys = make_batch(seed=1)
    problem = loss_problem(make_model(seed=1), xs, ys, obs["loss"])
    if problem is not None:
        return problem
    twin = make_model(seed=1, guarded=False)
    want = gradients(twin, reference_loss(twin, xs, ys))
    got = obs["grads"]
    missing = [name for name in want if not isinstance(got.get(name), np.ndarray)]
    if missing:
        return (f"{len(missing)} parameters got no gradient (e.g. {missing[0]}): something cut "
                f"the graph between them and the loss, such as a .array, numpy instead of "
                f"chainer.functions, or a step done under chainer.no_backprop_mode()")
    for name, g in got.items():
        if name in want and not (g.shape == want[name].shape
                                 and np.allclose(g, want[name], rtol=1e-3, atol=1e-5)):
            return (f"the gradient of {name} differs from the reference although the loss "
                    f"matches: is part of the loss computed outside the graph?")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_no_attention_one_layer(submission, observe):
    """A one-layer model without attention, on a batch of three and a batch of one."""
    model = make_model(seed=2, n_units=8, n_layers=1, attention=False)
    for i, (src, tgt) in enumerate(ONE_LAYER):
        xs, ys = make_batch(seed=2, src_lengths=src, tgt_lengths=tgt)
        observe(**{f"loss{i}": loss_observed(submission.decoder_loss(model, xs, ys))})
    xs, ys = make_batch(seed=0)
    # Only for the check's hint (the attention model is test_loss_matches_model's case): if
    # the answer raises there, there is no hint, and this test's verdict stands.
    with contextlib.suppress(Exception):
        observe(attention=loss_observed(submission.decoder_loss(make_model(seed=0), xs, ys)))


def check_no_attention_one_layer(obs, run):
    model = make_model(seed=2, n_units=8, n_layers=1, attention=False)
    for i, (src, tgt) in enumerate(ONE_LAYER):
        xs, ys = make_batch(seed=2, src_lengths=src, tgt_lengths=tgt)
        problem = loss_problem(model, xs, ys, obs[f"loss{i}"],
                               name=f"with {len(xs)} sentence(s) and no attention, your loss")
        if problem is not None:
            axs, ays = make_batch(seed=0)
            attention = obs.get("attention", {"kind": None})
            if loss_problem(make_model(seed=0), axs, ays, attention) is None:
                problem += (" (it is right with attention: let model.output_features turn the "
                            "decoder outputs into features; it applies attention only when the "
                            "model has it)")
            return problem
    return None
