"""Shared by lab 05's graded tests: a tiny Chainer training run that records, for every update,
the epoch it started at, the learning rate it used and its batch size."""
import warnings

import numpy as np

with warnings.catch_warnings():
    warnings.simplefilter("ignore")  # Chainer's import warnings
    import chainer
    import chainer.links as L
    from chainer import training


def check_extension(ext, name):
    """None when ``ext`` looks like a Chainer extension; else what is wrong with it."""
    if ext is None:
        return f"{name} returned None: return the extension (the decorated inner function)"
    if not callable(ext):
        return f"{name} returned a {type(ext).__name__}, not an extension (a callable)"
    trigger = getattr(ext, "trigger", None)
    if trigger is not None and tuple(trigger) != (1, "iteration"):
        return (f"{name}'s extension has trigger {trigger}; it must run every iteration: "
                f"make_extension(trigger=(1, 'iteration'), ...)")
    return None


def tiny_run(extension, optimizer, n=64, batchsize=8, epochs=3, attr="lr"):
    """Train a linear classifier on ``n`` random examples with ``extension``.

    Returns:
        ``(seen, iterator, losses)``: per update (epoch_detail before it, the rate it used, its
        batch size); the training iterator; the training loss per update.
    """
    rng = np.random.RandomState(0)
    x = rng.normal(size=(n, 3)).astype(np.float32)
    t = (x[:, 0] + 0.5 * x[:, 1] > 0).astype(np.int32)
    np.random.seed(0)
    model = L.Classifier(L.Linear(3, 2))
    optimizer.setup(model)
    iterator = chainer.iterators.SerialIterator(chainer.datasets.TupleDataset(x, t), batchsize,
                                                shuffle=False)
    seen, losses = [], []

    def converter(batch, device=None):  # after the batch is drawn, before the update
        seen.append((iterator.previous_epoch_detail or 0.0, getattr(optimizer, attr), len(batch)))
        return chainer.dataset.concat_examples(batch, device)

    def lossfun(*args):
        loss = model(*args)
        losses.append(float(loss.array))
        return loss

    updater = training.StandardUpdater(iterator, optimizer, converter=converter,
                                       loss_func=lossfun)
    trainer = training.Trainer(updater, (epochs, "epoch"))
    trainer.extend(extension)
    trainer.run()
    return seen, iterator, losses


def first_difference(got, want, describe):
    """None when the two lists agree (to 1e-6); else a sentence about the first place they don't."""
    for i, (g, w) in enumerate(zip(got, want)):
        if not np.isclose(g, w, rtol=1e-6, atol=1e-12):
            return describe(i, g, w)
    if len(got) != len(want):
        return f"{len(got)} updates were made, expected {len(want)}"
    return None
