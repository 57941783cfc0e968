# MUTANT: sets the rate once, before the first update, and never again
# EXPECT: expected
from chainer import training


def warmup_extension(base_lr, scale, warmup_epochs, attr="lr"):
    """A Chainer extension for linear scaling with gradual warm-up.

    Every iteration (and once before the first update) it sets the main optimizer's ``attr``
    to ``warmup_lr(trainer.updater.epoch_detail, base_lr, scale, warmup_epochs)``.

    Args:
        base_lr: the rate tuned for the base batch.
        scale: k, the global batch divided by the base batch.
        warmup_epochs: the length of the linear warm-up, in epochs (0: none).
        attr: the optimizer's hyperparameter to set: ``"lr"`` (SGD) or ``"alpha"`` (Adam).

    Returns:
        The extension, for ``trainer.extend``.
    """
    ### BEGIN SOLUTION
    def set_rate(trainer):
        updater = trainer.updater
        rate = warmup_lr(updater.epoch_detail, base_lr, scale, warmup_epochs)
        setattr(updater.get_optimizer("main"), attr, rate)

    @training.make_extension(trigger=(1, "iteration"), initializer=set_rate)
    def warmup(trainer):
        pass

    return warmup
    ### END SOLUTION
