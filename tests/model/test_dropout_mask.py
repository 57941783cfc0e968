"""A dropout mask kept as booleans (dlhack.model.dropout_mask)."""
import chainer
import chainer.functions as F
import numpy as np
import pytest

from dlhack.model.dropout_mask import DropoutMask, draw, dropped
from dlhack.model.fused_lstm import lstm_layer
from dlhack.model.fused_output import OutputLoss
from dlhack.model.packing import Packing


def masks(shape, seed=0, ratio=0.3):
    """The same mask twice: as booleans and as the float32 array it stands for."""
    keep = np.random.RandomState(seed).rand(*shape) >= ratio
    return DropoutMask(keep, ratio), keep * np.float32(1 / (1 - ratio))


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])
def test_dropped_equals_the_float_mask_and_writes_in_place(monkeypatch, kernels):
    if kernels == "numpy":
        monkeypatch.setenv("DLHACK_KERNELS", "numpy")
    compact, plain = masks((5, 4))
    x = np.random.RandomState(1).randn(5, 4).astype(np.float32)
    want = x * plain
    got = dropped(x, compact)
    assert got.dtype == np.float32 and np.array_equal(got, want)
    assert np.array_equal(dropped(x[1:3], compact[1:3]), want[1:3])
    assert np.array_equal(dropped(x[:, 1:], compact[:, 1:]), want[:, 1:])  # not contiguous
    assert np.array_equal(dropped(x, plain), want)
    dropped(x, compact, out=x)
    assert np.array_equal(x, want)
    assert compact.keep.nbytes * 4 == plain.nbytes


def run_layer(mask, seed=2, H=4, n_in=3):
    """A float32 layer's outputs and its input's gradient under ``mask``."""
    rng = np.random.RandomState(seed)
    packing = Packing([4, 2, 2])
    x = chainer.Variable(rng.randn(packing.n, n_in).astype(np.float32))
    rest = [a.astype(np.float32) for a in (rng.randn(3, H), rng.randn(3, H),
                                           rng.randn(4 * H, n_in), rng.randn(4 * H, H),
                                           rng.randn(4 * H))]
    outs = lstm_layer(x, *rest, packing, mask)
    sum(F.sum(o * o) for o in outs).backward()
    return [o.array for o in outs] + [x.grad]


@pytest.mark.parametrize("kernels", ["compiled", "numpy"])
def test_lstm_layer_gives_the_same_numbers_with_either_mask(monkeypatch, kernels):
    if kernels == "numpy":
        monkeypatch.setenv("DLHACK_KERNELS", "numpy")
    compact, plain = masks((8, 3))
    for got, want in zip(run_layer(compact), run_layer(plain)):
        np.testing.assert_allclose(got, want, rtol=1e-6, atol=1e-7)
    unmasked = run_layer(None)
    assert not np.allclose(unmasked[-1], run_layer(plain)[-1])  # the mask did act


def test_output_loss_gives_the_same_numbers_with_either_mask():
    rng = np.random.RandomState(3)
    x, W, b = (rng.randn(*s).astype(np.float32) for s in ((6, 4), (5, 4), (5,)))
    targets = np.array([1, 0, 4, 2, -1, 3], np.int32)
    compact, plain = masks((6, 4), seed=4)
    results = []
    for mask in (compact, plain):
        variables = [chainer.Variable(a.copy()) for a in (x, W, b)]
        loss, = OutputLoss(targets, 2, mask).apply(variables)
        loss.backward()
        results.append([loss.array] + [v.grad for v in variables])
    for got, want in zip(*results):
        np.testing.assert_array_equal(got, want)


def test_drawn_masks_are_the_same_on_either_path_and_drop_at_the_ratio(monkeypatch):
    cases = ((0.25, 7), (0.25, 8), (0.0, 7))  # (ratio, key)
    compiled = [draw((300, 200), ratio, key) for ratio, key in cases]
    monkeypatch.setenv("DLHACK_KERNELS", "numpy")
    for mask, (ratio, key) in zip(compiled, cases):
        assert mask.keep.dtype == bool and mask.shape == (300, 200)
        np.testing.assert_array_equal(draw((300, 200), ratio, key).keep, mask.keep)
    a, b, everything = (m.keep for m in compiled)
    assert abs((~a).mean() - 0.25) < 0.01 and everything.all()
    # another key, another mask: they agree as two independent draws would (0.75^2 + 0.25^2)
    assert abs((a == b).mean() - 0.625) < 0.01
    # neighbouring units too, along rows and along columns
    assert abs((a[:, 1:] == a[:, :-1]).mean() - 0.625) < 0.01
    assert abs((a[1:] == a[:-1]).mean() - 0.625) < 0.01
    assert draw((4, 4), 0.25, 7).scale == np.float32(1 / 0.75)
    with pytest.raises(ValueError, match="2\\^32"):
        draw((2 ** 16, 2 ** 16), 0.5, 1)
