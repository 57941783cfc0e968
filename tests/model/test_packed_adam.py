"""PackedAdam: Chainer's Adam, number for number, over one packed buffer."""
import chainer
import numpy as np
import pytest

from dlhack.model.packed_adam import PackedAdam
from tests.model.batches import elementwise


class TwoLayers(chainer.Chain):
    def __init__(self):
        super().__init__()
        with self.init_scope():
            self.l1 = chainer.links.Linear(5, 300)  # 1500 weights: several chunks when small
            self.l2 = chainer.links.Linear(300, 2)

    def forward(self, x):
        return chainer.functions.sum(self.l2(chainer.functions.tanh(self.l1(x))) ** 2)


def trained(optimizer, steps=5, monkeypatch=None):
    np.random.seed(0)
    model = TwoLayers()
    optimizer.setup(model)
    x = np.random.RandomState(1).randn(4, 5).astype(np.float32)
    for _ in range(steps):
        optimizer.update(model, x)
    return model, optimizer


@pytest.mark.parametrize("chunk", [64, 32768])
def test_same_numbers_as_chainers_adam(monkeypatch, chunk):
    """The numpy path: Chainer's operations in Chainer's order, so the same numbers."""
    elementwise(monkeypatch, "numpy")
    monkeypatch.setattr("dlhack.model.packed_adam.CHUNK", chunk)
    ref, _ = trained(chainer.optimizers.Adam(alpha=0.01, eta=0.5))
    model, optimizer = trained(PackedAdam(alpha=0.01, eta=0.5))
    for (name, p), (_, q) in zip(sorted(model.namedparams()), sorted(ref.namedparams())):
        np.testing.assert_array_equal(p.array, q.array, err_msg=name)
    assert optimizer.t == 5


def test_compiled_update_equals_chainers_adam_to_float_tolerance(monkeypatch):
    """``elementwise.c``'s one pass: the same Adam, rounded differently (float32)."""
    elementwise(monkeypatch, "compiled")
    ref, _ = trained(chainer.optimizers.Adam(alpha=0.01, eta=0.5))
    model, _ = trained(PackedAdam(alpha=0.01, eta=0.5))
    np.random.seed(0)
    start = dict(TwoLayers().namedparams())
    for (name, p), (_, q) in zip(sorted(model.namedparams()), sorted(ref.namedparams())):
        np.testing.assert_allclose(p.array, q.array, rtol=1e-5, atol=1e-6, err_msg=name)
        assert np.abs(p.array - start[name].array).max() > 1e-3  # the steps moved it
    for (name, p), (_, q) in zip(sorted(model.namedparams()), sorted(ref.namedparams())):
        np.testing.assert_allclose(p.update_rule.state["v"], q.update_rule.state["v"],
                                   rtol=1e-5, atol=1e-9, err_msg=name)


@pytest.mark.parametrize("path", ["numpy", "compiled"])
def test_a_range_whose_gradient_is_a_sum_of_slots(monkeypatch, path):
    """``update_range_sum`` (the sharded update's chunk) is ``update_range`` with the slots
    added in order: on its range only, and across several chunks."""
    elementwise(monkeypatch, path)
    monkeypatch.setattr("dlhack.model.packed_adam.CHUNK", 64)
    from dlhack.model.ckernels import kernels_for

    _, summed = trained(PackedAdam(alpha=0.01), steps=1)
    _, plain = trained(PackedAdam(alpha=0.01), steps=1)
    n, rng = len(summed._data), np.random.RandomState(2)
    slots = [rng.randn(n).astype(np.float32) for _ in range(3)]
    begin, end = 7, n - 300  # inside the buffer, not on a chunk's edge
    lib, step = kernels_for(summed._data), summed.step_constants()
    before = summed._data.copy()
    summed.update_range_sum(begin, end, slots, lib, step)
    total = slots[0] + slots[1]
    total += slots[2]
    plain.update_range(begin, end, total[begin:end], lib, step)
    for mine, want in ((summed._data, plain._data), (summed._m, plain._m), (summed._v, plain._v)):
        if path == "numpy":  # the same operations in the same order
            np.testing.assert_array_equal(mine, want)
        np.testing.assert_allclose(mine, want, rtol=1e-6, atol=1e-9)
    outside = np.r_[0:begin, end:n]
    np.testing.assert_array_equal(summed._data[outside], before[outside])
    assert np.abs(summed._data[begin:end] - before[begin:end]).min() > 0


def test_parameters_are_views_of_one_buffer_and_stay_so():
    model, optimizer = trained(PackedAdam(), steps=1)
    assert all(np.shares_memory(p.array, optimizer._data) for p in model.params())
    model.l1.W.array = model.l1.W.array + 1.0  # a broadcast or a load replaces the array
    before = model.l1.W.array.copy()
    optimizer.update(model, np.ones((1, 5), np.float32))
    assert np.shares_memory(model.l1.W.array, optimizer._data)
    assert not np.allclose(model.l1.W.array, before)  # updated from the new values
    assert np.abs(model.l1.W.array - before).max() < 0.01


def test_snapshot_restores_the_moments():
    _, optimizer = trained(PackedAdam())
    saved = {}
    optimizer.serialize(chainer.serializers.DictionarySerializer(saved))
    _, fresh = trained(PackedAdam(), steps=1)
    fresh.serialize(chainer.serializers.NpzDeserializer(saved))
    np.testing.assert_array_equal(fresh._m, optimizer._m)
    np.testing.assert_array_equal(fresh._v, optimizer._v)
    assert fresh.t == optimizer.t


def test_refuses_what_it_does_not_implement():
    with pytest.raises(ValueError):
        trained(PackedAdam(amsgrad=True), steps=0)
    with pytest.raises(ValueError):
        trained(PackedAdam(weight_decay_rate=0.1), steps=0)


def test_last_gradients_are_gone_before_the_forward():
    """update(lossfun) clears the gradients before calling it: the last step's and this step's
    activations are never in memory together."""
    model, optimizer = trained(PackedAdam(), steps=1)
    seen = []

    def lossfun(x):
        seen.append([p.grad is None for p in model.params()])
        return model(x)

    optimizer.update(lossfun, np.ones((1, 5), np.float32))
    assert seen == [[True] * len(seen[0])]
    assert all(p.grad is not None for p in model.params())  # this step's, for the update
