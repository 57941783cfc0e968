"""Exercise 1 of lab 01: ``decoder_loss(model, xs, ys)``, the training loss written step by step.

The reference is the loss written step by step in translator.py (``reference_loss``), on the
same seeded weights and batch; the answer gets a model whose own loss, ``model(xs, ys)``, and
whole-sequence decoder are switched off.
"""
import numpy as np
import pytest
from translator import gradients, loss_problem, make_batch, make_model, reference_loss


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_loss_matches_model(submission):
    """On a batch of five sentences of different lengths, the loss equals the reference."""
    model = make_model(seed=0)
    xs, ys = make_batch(seed=0)
    problem = loss_problem(model, xs, ys, submission.decoder_loss(model, xs, ys))
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_gradients_match(submission):
    """Every parameter gets the same gradient from your loss as from the reference loss."""
    xs, ys = make_batch(seed=1)
    twin = make_model(seed=1, guarded=False)
    want = gradients(twin, reference_loss(twin, xs, ys))
    model = make_model(seed=1)
    loss = submission.decoder_loss(model, xs, ys)
    problem = loss_problem(model, xs, ys, loss)
    assert problem is None, problem
    got = gradients(model, loss)
    missing = [name for name, g in got.items() if g is None]
    assert not missing, (
        f"{len(missing)} parameters got no gradient (e.g. {missing[0]}): something cut the graph "
        f"between them and the loss, such as a .array, numpy instead of chainer.functions, or "
        f"a step done under chainer.no_backprop_mode()")
    for name, g in got.items():
        assert np.allclose(g, want[name], rtol=1e-3, atol=1e-5), (
            f"the gradient of {name} differs from the reference (largest difference "
            f"{np.abs(g - want[name]).max():.3g}) although the loss matches: is part of the loss "
            f"computed outside the graph?")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=60)
def test_no_attention_one_layer(submission):
    """A one-layer model without attention, on a batch of three and a batch of one."""
    model = make_model(seed=2, n_units=8, n_layers=1, attention=False)
    for src, tgt in [((5, 3, 7), (4, 1, 6)), ((2,), (1,))]:
        xs, ys = make_batch(seed=2, src_lengths=src, tgt_lengths=tgt)
        problem = loss_problem(model, xs, ys, submission.decoder_loss(model, xs, ys),
                               name=f"with {len(xs)} sentence(s) and no attention, your loss")
        if problem is not None:
            attention_model = make_model(seed=0)
            axs, ays = make_batch(seed=0)
            if loss_problem(attention_model, axs, ays,
                            submission.decoder_loss(attention_model, axs, ays)) is None:
                problem += (" (it is right with attention: let model.output_features turn the "
                            "decoder outputs into features; it applies attention only when the "
                            "model has it)")
        assert problem is None, problem
