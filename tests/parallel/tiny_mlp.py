"""A tiny MLP and its data for the parallel tests (``from tests.parallel.tiny_mlp import ...``)."""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np


class MLP(chainer.Chain):
    """A tiny two-layer perceptron, no dropout: ``(batch, n_in) -> (batch, n_out)``."""

    def __init__(self, n_in=5, n_units=8, n_out=3, seed=0, lazy=False, dtype=np.float32):
        super().__init__()
        rng = np.random.RandomState(seed)

        def normal():  # weights from our own generator: the same for the same seed
            return chainer.initializers.Normal(0.5, dtype=dtype, rng=rng)

        with self.init_scope():
            # lazy: the first layer learns its input size at the first forward pass.
            self.l1 = L.Linear(None if lazy else n_in, n_units, initialW=normal())
            self.l2 = L.Linear(n_units, n_out, initialW=normal())
            self.unused = L.Linear(2, 2, initialW=normal())  # never called: tests zero_fill

    def forward(self, x):
        return self.l2(F.tanh(self.l1(x)))


def make_mlp(seed=0, dtype=np.float32, lazy=False):
    """An ``MLP`` whose weights depend only on ``seed`` (and ``dtype``)."""
    with chainer.using_config("dtype", dtype):  # the biases' dtype
        return MLP(seed=seed, lazy=lazy, dtype=dtype)


def mlp_examples(n, seed=0, dtype=np.float32):
    """``n`` examples ``(x, t)``: x (5,) of ``dtype``, t an int32 class in 0..2."""
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, 5)).astype(dtype)
    t = rng.randint(0, 3, size=n).astype(np.int32)
    return list(zip(x, t, strict=True))


def mlp_loss(model, examples):
    """Mean softmax cross-entropy over ``examples``."""
    x, t = chainer.dataset.concat_examples(examples)
    return F.softmax_cross_entropy(model(x), t)
