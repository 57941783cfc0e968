# MUTANT: keeps raising the rate after the warm-up
# EXPECT: after the warm-up
def warmup_lr(epoch, base_lr, scale, warmup_epochs):
    """The learning rate at ``epoch`` under linear scaling with gradual warm-up.

    Args:
        epoch: epochs done so far, a float (``trainer.updater.epoch_detail``).
        base_lr: the rate tuned for the base batch.
        scale: k, the global batch divided by the base batch.
        warmup_epochs: epochs over which the rate rises linearly from ``base_lr`` to
            ``base_lr * scale``; 0 means no warm-up.

    Returns:
        The rate, a float.
    """
    ### BEGIN SOLUTION
    if warmup_epochs <= 0:
        return base_lr * scale
    return base_lr * (1 + (scale - 1) * epoch / warmup_epochs)
    ### END SOLUTION
