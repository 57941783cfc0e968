"""Learning-rate and batch-size schedules for large batches, as Chainer trainer extensions.

    trainer.extend(LinearScalingWarmup(base_lr=0.05, scale=8, warmup_epochs=2))   # Goyal et al.
    trainer.extend(StepDecay(lr=0.05, milestones=[6, 8], factor=5))               # the usual decay
    trainer.extend(BatchSizeSchedule(batchsize=32, milestones=[6, 8], factor=5))  # Smith et al.

In data-parallel training the effective (global) batch is ``batchsize x ranks``. Training for the
same number of epochs with a batch k times larger makes k times fewer updates; at the same
learning rate, accuracy drops (大規模化に伴う精度低下). Two remedies from the literature:

- Linear scaling with gradual warm-up (Goyal et al. 2017, "Accurate, Large Minibatch SGD"):
  for a batch of k x the base batch, use k x the base rate, reached linearly over the first
  few epochs, since a large rate at the very start can throw training off. They report no loss
  of accuracy up to a batch of 8k on ImageNet (and losses beyond). The rule is for SGD; for Adam
  (``attr="alpha"``) it is a heuristic, and a square-root rule is often used instead.
- Growing the batch instead of decaying the rate (Smith et al. 2017, "Don't Decay the Learning
  Rate, Increase the Batch Size"): where a step schedule would divide the rate by ``factor``,
  multiply the batch by ``factor`` instead. SGD's noise scale (about lr x N / batch) then
  follows the same curve, so the accuracy curve per epoch is about the same, with fewer updates.

Every schedule is a function of ``updater.epoch_detail`` (fractional epochs), so it is the same
whatever the batch size, and a resumed trainer picks it up where it was. The extensions run
every iteration, after the update, and set the value the next update uses; ``initialize`` sets
the value for the very first update. Lesson 05 uses them; lab 05 has learners write two.
"""
import bisect

from chainer.training import Extension


def warmup_scaled_lr(epoch, base_lr, scale, warmup_epochs):
    """``base_lr`` at epoch 0 rising linearly to ``base_lr * scale`` at ``warmup_epochs``.

    Args:
        epoch: fractional epochs done (``updater.epoch_detail``).
        base_lr: the rate tuned for the base batch.
        scale: k, the global batch divided by the base batch.
        warmup_epochs: how long the ramp lasts; 0 jumps to ``base_lr * scale`` at once.
    """
    if warmup_epochs <= 0 or epoch >= warmup_epochs:
        return base_lr * scale
    return base_lr * (1 + (scale - 1) * epoch / warmup_epochs)


def lr_scale(rule, ranks):
    """How much a rate tuned for one rank's batch grows on ``ranks`` ranks: ``"none"`` 1,
    ``"linear"`` ``ranks`` (Goyal et al.), ``"sqrt"`` its square root (often used with Adam)."""
    return {"none": 1, "linear": ranks, "sqrt": ranks ** 0.5}[rule]


def step_lr(epoch, lr, milestones, factor):
    """``lr`` divided by ``factor`` once for each milestone (in epochs) reached by ``epoch``."""
    return lr / factor ** bisect.bisect_right(sorted(milestones), epoch)


def grown_batchsize(epoch, batchsize, milestones, factor, max_batchsize=None):
    """``batchsize`` multiplied by ``factor`` once for each milestone reached (capped)."""
    grown = round(batchsize * factor ** bisect.bisect_right(sorted(milestones), epoch))
    return grown if max_batchsize is None else min(grown, max_batchsize)


class LrSchedule(Extension):
    """Set the optimizer's rate to ``schedule(epoch)`` before every update.

    Args:
        schedule: ``schedule(epoch_detail) -> rate``.
        attr: the optimizer's hyperparameter: ``"lr"`` (SGD, MomentumSGD) or ``"alpha"`` (Adam).
        optimizer_name: which of the updater's optimizers (``"main"`` by default).
    """

    trigger = 1, "iteration"

    def __init__(self, schedule, attr="lr", optimizer_name="main"):
        self.schedule, self.attr, self.optimizer_name = schedule, attr, optimizer_name

    def value(self, epoch):
        """The rate this schedule gives at ``epoch`` (fractional epochs)."""
        return self.schedule(epoch)

    def initialize(self, trainer):
        self(trainer)

    def __call__(self, trainer):
        updater = trainer.updater
        optimizer = updater.get_optimizer(self.optimizer_name)
        setattr(optimizer, self.attr, self.value(updater.epoch_detail))


class LinearScalingWarmup(LrSchedule):
    """Goyal et al.'s rule: ``base_lr x scale`` after a linear warm-up, then optional steps.

    Args:
        base_lr: the rate tuned for the base batch.
        scale: k, global batch / base batch (e.g. the number of ranks, at a fixed per-rank batch).
        warmup_epochs: epochs of linear ramp from ``base_lr`` to ``base_lr x scale``.
        milestones: epochs at which the rate is then divided by ``factor`` (none by default).
        factor: the divisor at each milestone.
        attr: ``"lr"`` or ``"alpha"``.
    """

    def __init__(self, base_lr, scale, warmup_epochs=5, milestones=(), factor=10, attr="lr",
                 optimizer_name="main"):
        super().__init__(self._lr, attr=attr, optimizer_name=optimizer_name)
        self.base_lr, self.scale, self.warmup_epochs = base_lr, scale, warmup_epochs
        self.milestones, self.factor = tuple(milestones), factor

    def _lr(self, epoch):
        lr = warmup_scaled_lr(epoch, self.base_lr, self.scale, self.warmup_epochs)
        return step_lr(epoch, lr, self.milestones, self.factor)


class StepDecay(LrSchedule):
    """The rate divided by ``factor`` at each milestone epoch: ``lr``, ``lr/f``, ``lr/f**2``..."""

    def __init__(self, lr, milestones, factor=10, attr="lr", optimizer_name="main"):
        super().__init__(lambda epoch: step_lr(epoch, lr, milestones, factor), attr=attr,
                         optimizer_name=optimizer_name)
        self.lr, self.milestones, self.factor = lr, tuple(milestones), factor


def set_batchsize(iterator, batchsize):
    """Change an iterator's batch size: ``batch_size`` for Chainer's, ``batchsize`` for ours.

    Chainer's ``SerialIterator`` uses the new size from its next batch. ``dlhack.corpus.batching.
    BucketIterator`` cuts a whole epoch into batches when the previous epoch ends, so there the
    new size applies from the epoch after the one already cut.
    """
    for name in ("batch_size", "batchsize"):
        if hasattr(iterator, name):
            setattr(iterator, name, int(batchsize))
            return
    raise TypeError(f"{type(iterator).__name__} has no batch_size or batchsize to change")


def batchsize_of(iterator):
    """The iterator's current batch size (``batch_size`` or ``batchsize``)."""
    return getattr(iterator, "batch_size", None) or iterator.batchsize


class BatchSizeSchedule(Extension):
    """Smith et al.'s schedule: multiply the batch by ``factor`` at each milestone epoch.

    Use it in place of ``StepDecay(lr, milestones, factor)`` with the same milestones and
    factor, and a constant rate: the noise scale follows the same steps, with fewer updates.

    Args:
        batchsize: the batch size to start with.
        milestones: epochs at which the batch is multiplied by ``factor``.
        factor: the multiplier.
        max_batchsize: a cap (e.g. the memory limit); past it, decay the rate instead.
        iterator_name: which of the updater's iterators (``"main"`` by default).
    """

    trigger = 1, "iteration"

    def __init__(self, batchsize, milestones, factor=10, max_batchsize=None,
                 iterator_name="main"):
        self.batchsize, self.milestones, self.factor = batchsize, tuple(milestones), factor
        self.max_batchsize, self.iterator_name = max_batchsize, iterator_name

    def value(self, epoch):
        """The batch size at ``epoch`` (fractional epochs)."""
        return grown_batchsize(epoch, self.batchsize, self.milestones, self.factor,
                               self.max_batchsize)

    def initialize(self, trainer):
        self(trainer)

    def __call__(self, trainer):
        updater = trainer.updater
        set_batchsize(updater.get_iterator(self.iterator_name), self.value(updater.epoch_detail))


def updates_per_epoch(n_examples, batchsize):
    """How many updates one epoch of ``n_examples`` takes at ``batchsize`` (rounded up)."""
    return -(-n_examples // batchsize)
