"""The fused translator against the readable one: same loss, same gradients, same training."""
import chainer
import numpy as np
import pytest
from chainer import gradient_check

from dlhack.model import fused_output
from dlhack.model.dropout_mask import dropped
from dlhack.model.fused import FusedSeq2seq, gather_rows, stack_groups, stack_rows
from dlhack.model.packed_adam import PackedAdam
from dlhack.model.seq2seq import Seq2seq
from tests.model.batches import (
    V,
    assert_same_loss_and_grads,
    elementwise,
    loss_and_grads,
    random_batch,
)


def twins(layers, attention, dropout=0.0, units=12):
    """A readable and a fused model with the same weights (float64: rounding out of it)."""
    with chainer.using_config("dtype", np.float64):
        np.random.seed(0)
        readable = Seq2seq(V, V + 3, n_units=units, n_layers=layers, dropout=dropout,
                           attention=attention)
        np.random.seed(0)
        fused = FusedSeq2seq(V, V + 3, n_units=units, n_layers=layers, dropout=dropout,
                             attention=attention)
    return readable, fused


@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("layers", [1, 3])
@pytest.mark.parametrize("rows", [fused_output.ROWS, 5])
def test_gradients_equal_the_readable_model(attention, layers, rows, monkeypatch):
    """Also with the output layer's blocks of tokens smaller than the batch."""
    monkeypatch.setattr(fused_output, "ROWS", rows)
    xs, ys = random_batch(np.random.RandomState(layers), 7)
    readable, fused = twins(layers, attention)
    assert_same_loss_and_grads(loss_and_grads(fused, xs, ys), loss_and_grads(readable, xs, ys),
                               rtol=1e-9, atol=1e-12)


@pytest.mark.parametrize("path", ["numpy", "compiled"])
@pytest.mark.parametrize("attention", [False, True])
def test_training_gives_the_same_losses(monkeypatch, attention, path):
    """Readable model + Chainer's Adam against fused model + PackedAdam, float32, 6 steps
    (each loss taken on the first batch, after the step), on either elementwise path."""
    elementwise(monkeypatch, path)
    rng = np.random.RandomState(5)
    batches = [random_batch(rng, 8) for _ in range(6)]
    probe = batches[0]
    losses = {}
    for name, cls, opt in (("readable", Seq2seq, chainer.optimizers.Adam),
                           ("fused", FusedSeq2seq, PackedAdam)):
        np.random.seed(0)
        model = cls(V, V, n_units=16, n_layers=2, dropout=0.0, attention=attention)
        optimizer = opt(alpha=0.01)
        optimizer.setup(model)
        losses[name] = []
        for xs, ys in batches:
            optimizer.update(model, xs, ys)
            losses[name].append(float(model(*probe).array))
    np.testing.assert_allclose(losses["fused"], losses["readable"], rtol=1e-4)
    assert losses["readable"][-1] < losses["readable"][0]  # training moved


@pytest.mark.parametrize("path", ["numpy", "compiled"])
@pytest.mark.parametrize("dtype", [np.float64, np.float32])  # float32: the compiled path's
def test_gather_rows_adds_repeated_rows_back(monkeypatch, path, dtype):
    elementwise(monkeypatch, path)
    x = chainer.Variable(np.arange(6.0, dtype=dtype).reshape(3, 2))
    out = gather_rows(x, np.array([2, -1, 2, 0]))
    assert out.array.tolist() == [[4, 5], [0, 0], [4, 5], [0, 1]]
    out.grad = np.ones((4, 2), dtype)
    out.backward()
    assert x.grad.tolist() == [[1, 1], [0, 0], [2, 2]]


def test_dropout_masks_drop_at_the_ratio_and_keep_the_mean():
    np.random.seed(0)
    model = FusedSeq2seq(V, V, n_units=8, n_layers=2, dropout=0.25)
    mask = model._mask((400, 100))
    assert mask.keep.dtype == bool and mask.shape == (400, 100)
    assert abs((~mask.keep).mean() - 0.25) < 0.02
    applied = dropped(np.ones((400, 100), np.float32), mask)
    assert applied.dtype == np.float32
    assert set(np.unique(applied)) == {0, np.float32(1 / 0.75)}
    with chainer.using_config("train", False):
        assert model._mask((4, 4)) is None


def test_fused_model_translates_like_the_readable_one():
    xs, _ = random_batch(np.random.RandomState(3), 5)
    readable, fused = twins(2, True, units=8)
    assert [list(y) for y in fused.translate(xs, 6)] == [list(y) for y in
                                                          readable.translate(xs, 6)]


def test_fused_refuses_the_nstep_formulation():
    with pytest.raises(ValueError):
        FusedSeq2seq(V, V, n_units=4, n_layers=1, impl="nstep")


def test_stack_rows_is_a_view_of_packed_gates_and_splits_the_gradient():
    """After PackedAdam packs a layer's gates, a layer's weights are a view of its buffer (no
    copy per step); apart, the same rows are a copy. Either way the gradient splits back."""
    np.random.seed(0)
    model = FusedSeq2seq(V, V, n_units=4, n_layers=2)
    ws = model.encoder.ws[1]
    apart = stack_rows(ws[:4])
    assert not np.shares_memory(apart.array, ws[0].array)
    PackedAdam().setup(model)
    stacked = stack_rows(ws[4:])
    assert np.shares_memory(stacked.array, ws[7].array)
    np.testing.assert_array_equal(stacked.array, np.concatenate([w.array for w in ws[4:]]))
    assert not np.shares_memory(stack_rows([ws[5], ws[4]]).array, ws[4].array)  # out of order
    x = [chainer.Variable(np.random.randn(2, 3)), chainer.Variable(np.random.randn(1, 3))]
    gradient_check.check_backward(lambda *a: stack_rows(a), [v.array for v in x],
                                  np.random.randn(3, 3), dtype=np.float64)
    # a layer's three groups in one node: each a view, as stack_rows makes it
    w_x, w_h, b = stack_groups(ws[:4], ws[4:], model.encoder.bs[1])
    assert w_x.creator is w_h.creator is b.creator
    assert np.shares_memory(w_x.array, ws[0].array) and np.shares_memory(w_h.array, ws[7].array)
    np.testing.assert_array_equal(w_h.array, stacked.array)
    assert b.shape == (8 * 4,)
    x.append(chainer.Variable(np.random.randn(3, 2)))
    gradient_check.check_backward(lambda *a: stack_groups(a[:2], a[2:]), [v.array for v in x],
                                  (np.random.randn(3, 3), np.random.randn(3, 2)),
                                  dtype=np.float64)
