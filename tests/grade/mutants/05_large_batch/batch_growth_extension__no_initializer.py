# MUTANT: grows the batch after updates but not before the first
# EXPECT: initializer
# FAST
from chainer import training


def batch_growth_extension(batchsize, milestones, factor):
    """A Chainer extension that multiplies the training batch by ``factor`` at each milestone.

    Every iteration (and once before the first update) it sets the main iterator's
    ``batch_size`` to ``batchsize * factor ** k``, where k is the number of milestones (in
    epochs, any order) that ``trainer.updater.epoch_detail`` has reached.

    Args:
        batchsize: the batch size to start with.
        milestones: epochs at which the batch grows, e.g. ``[30, 60]``.
        factor: the multiplier, an int.

    Returns:
        The extension, for ``trainer.extend``.
    """
    ### BEGIN SOLUTION
    def set_batch(trainer):
        updater = trainer.updater
        reached = sum(1 for m in milestones if updater.epoch_detail >= m)
        updater.get_iterator("main").batch_size = int(batchsize * factor ** reached)

    @training.make_extension(trigger=(1, "iteration"))
    def grow(trainer):
        set_batch(trainer)

    return grow
    ### END SOLUTION
