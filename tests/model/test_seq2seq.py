"""The translator (dlhack.model.seq2seq): the fast LSTM path against Chainer's NStepLSTM, the
loss, translation."""
import chainer
import numpy as np
import pytest

from dlhack.model.seq2seq import EOS, Seq2seq
from tests.model.batches import V, assert_same_loss_and_grads, loss_and_grads, random_batch


@pytest.mark.parametrize("attention", [True, False])
@pytest.mark.parametrize("layers", [1, 3])
def test_fast_lstm_matches_nstep_reference(attention, layers):
    rng = np.random.RandomState(0)
    xs, ys = random_batch(rng, 7)
    model = Seq2seq(V, V, n_units=12, n_layers=layers, dropout=0.0, attention=attention)
    model.impl = "fast"
    fast = loss_and_grads(model, xs, ys)
    model.impl = "nstep"
    assert_same_loss_and_grads(fast, loss_and_grads(model, xs, ys), rtol=1e-4, atol=1e-6)


def test_loss_is_mean_over_sentences():
    """Averaging two halves' losses gives the whole batch's loss: what data parallelism needs."""
    rng = np.random.RandomState(2)
    xs, ys = random_batch(rng, 8)
    model = Seq2seq(V, V, n_units=8, n_layers=2, dropout=0.0)
    whole = float(model(xs, ys).array)
    halves = [float(model(xs[i:i + 4], ys[i:i + 4]).array) for i in (0, 4)]
    assert whole == pytest.approx(sum(halves) / 2, rel=1e-5)


def test_translate_shapes():
    rng = np.random.RandomState(3)
    xs, _ = random_batch(rng, 5)
    model = Seq2seq(V, V, n_units=8, n_layers=2)
    outs = model.translate(xs, max_length=7)
    assert len(outs) == 5
    for y in outs:
        assert y.dtype == np.int32 and len(y) <= 7 and EOS not in y


def test_loss_falls_on_a_tiny_corpus():
    """A small model learns to copy-and-reverse a few sentences: the loss must fall a lot."""
    rng = np.random.RandomState(4)
    xs = [rng.randint(3, V, size=5).astype(np.int32) for _ in range(16)]
    ys = [x[::-1].copy() for x in xs]
    np.random.seed(0)
    model = Seq2seq(V, V, n_units=32, n_layers=1, dropout=0.0)
    optimizer = chainer.optimizers.Adam(alpha=0.01)
    optimizer.setup(model)
    first = float(model(xs, ys).array)
    for _ in range(60):
        optimizer.update(model, xs, ys)
    last = float(model(xs, ys).array)
    assert last < 0.2 * first, (first, last)
