"""The large-batch schedules: their values, and that a real Trainer run uses them."""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest
from chainer import training

from dlhack.corpus.batching import BucketIterator
from dlhack.parallel import schedules


def test_warmup_ramps_linearly_to_scaled_rate():
    lr = schedules.warmup_scaled_lr
    assert lr(0, 0.1, 8, 2) == pytest.approx(0.1)
    assert lr(1, 0.1, 8, 2) == pytest.approx(0.45)  # halfway: 0.1 * (1 + 7 / 2)
    assert lr(2, 0.1, 8, 2) == pytest.approx(0.8)
    assert lr(7.5, 0.1, 8, 2) == pytest.approx(0.8)
    assert lr(0, 0.1, 8, 0) == pytest.approx(0.8)  # no warm-up: the scaled rate at once
    assert lr(0.5, 0.1, 1, 2) == pytest.approx(0.1)  # k = 1: nothing to scale


def test_step_decay_and_batch_growth_share_milestones():
    assert [schedules.step_lr(e, 1.0, [3, 5], 10) for e in (0, 2.99, 3, 4, 5, 9)] == \
        pytest.approx([1, 1, 0.1, 0.1, 0.01, 0.01])
    assert [schedules.grown_batchsize(e, 32, [5, 3], 4) for e in (0, 2.99, 3, 5)] == \
        [32, 32, 128, 512]
    assert schedules.grown_batchsize(6, 32, [3, 5], 4, max_batchsize=200) == 200
    scaled = schedules.LinearScalingWarmup(0.1, 4, warmup_epochs=1, milestones=[3], factor=10)
    assert [scaled.value(e) for e in (0, 0.5, 1, 2.9, 3)] == pytest.approx([0.1, 0.25, 0.4, 0.4, 0.04])


def tiny_run(extension, optimizer, n=64, batchsize=8, epochs=3, attr="lr"):
    """Train a linear classifier on ``n`` random examples with ``extension``.

    Returns:
        ``(seen, iterator)``: for each update, (epoch_detail before it, the rate it used, its
        batch size), and the training iterator.
    """
    rng = np.random.RandomState(0)
    data = chainer.datasets.TupleDataset(rng.normal(size=(n, 3)).astype(np.float32),
                                         rng.randint(0, 2, size=n).astype(np.int32))
    model = L.Classifier(L.Linear(3, 2))
    optimizer.setup(model)
    iterator = chainer.iterators.SerialIterator(data, batchsize, shuffle=False)
    seen = []

    def converter(batch, device=None):  # runs after the batch is drawn, before the update
        seen.append((iterator.previous_epoch_detail, getattr(optimizer, attr), len(batch)))
        return chainer.dataset.concat_examples(batch, device)

    trainer = training.Trainer(training.StandardUpdater(iterator, optimizer, converter=converter),
                               (epochs, "epoch"))
    trainer.extend(extension)
    trainer.run()
    return seen, iterator


def test_linear_scaling_warmup_sets_the_optimizer_rate_each_update():
    ext = schedules.LinearScalingWarmup(0.01, scale=4, warmup_epochs=1, milestones=[2], factor=10)
    seen, _ = tiny_run(ext, chainer.optimizers.SGD(lr=123.0))  # 123: must be overwritten
    assert len(seen) == 3 * 64 // 8
    for epoch, rate, _ in seen:
        assert rate == pytest.approx(ext.value(epoch)), f"at epoch {epoch}"
    rates = [rate for _, rate, _ in seen]
    assert rates[0] == pytest.approx(0.01) and max(rates) == pytest.approx(0.04)
    assert rates[-1] == pytest.approx(0.004)


def test_adam_alpha_is_scheduled():
    ext = schedules.StepDecay(1e-3, milestones=[1], factor=2, attr="alpha")
    seen, _ = tiny_run(ext, chainer.optimizers.Adam(alpha=5.0), epochs=2, attr="alpha")
    assert [rate for _, rate, _ in seen] == pytest.approx([1e-3] * 8 + [5e-4] * 8)


def test_batch_growth_changes_the_iterator_batch_and_cuts_updates():
    ext = schedules.BatchSizeSchedule(8, milestones=[1, 2], factor=2)
    seen, iterator = tiny_run(ext, chainer.optimizers.SGD(lr=0.1), n=64, batchsize=3, epochs=3)
    sizes = [size for _, _, size in seen]
    assert sizes == [8] * 8 + [16] * 4 + [32] * 2  # 14 updates instead of 24 at batch 8
    assert iterator.batch_size == 32
    assert [ext.value(e) for e in (0, 1, 2)] == [8, 16, 32]


def test_set_batchsize_on_both_iterator_kinds():
    serial = chainer.iterators.SerialIterator(list(range(10)), 2)
    schedules.set_batchsize(serial, 5)
    assert serial.batch_size == 5 and len(serial.next()) == 5
    pairs = [(np.arange(3, dtype=np.int32), np.arange(2, dtype=np.int32))] * 10
    bucket = BucketIterator(pairs, 2)
    schedules.set_batchsize(bucket, 4)
    assert bucket.batchsize == schedules.batchsize_of(bucket) == 4
    with pytest.raises(TypeError):
        schedules.set_batchsize(object(), 4)


def test_updates_per_epoch():
    assert schedules.updates_per_epoch(64, 8) == 8
    assert schedules.updates_per_epoch(65, 8) == 9


def test_schedule_loss_still_falls():
    """A short run with the warm-up rule trains: the loss falls (a smoke test of the wiring)."""
    rng = np.random.RandomState(1)
    x = rng.normal(size=(128, 2)).astype(np.float32)
    t = (x[:, 0] > 0).astype(np.int32)
    # Zero weights and no shuffling: the run is the same every time, and starts at log 2.
    model = L.Classifier(L.Linear(2, 2, initialW=0, initial_bias=0))
    opt = chainer.optimizers.MomentumSGD(lr=0.0)  # 0: only the extension can make it learn
    opt.setup(model)
    dataset = chainer.datasets.TupleDataset(x, t)
    it = chainer.iterators.SerialIterator(dataset, 32, shuffle=False)
    trainer = training.Trainer(training.StandardUpdater(it, opt), (5, "epoch"))
    trainer.extend(schedules.LinearScalingWarmup(0.05, scale=4, warmup_epochs=1))
    before = float(F.softmax_cross_entropy(model.predictor(x), t).array)
    trainer.run()
    after = float(F.softmax_cross_entropy(model.predictor(x), t).array)
    assert after < 0.5 * before
