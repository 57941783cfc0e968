"""Shared by the graded tests of lab 07: the split translator with the learner's ``split_encode``
in place of the library's transfer, and the single-process reference with the same weights."""
import chainer
import numpy as np
import pytest

from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel.model_parallel import ModelParallelSeq2seq, copy_weights

N_SRC, N_TGT, UNITS, LAYERS = 23, 29, 16, 2


class LibraryShortcut(RuntimeError):
    """Raised when an answer calls the library's own transfer, which the exercise asks for."""


def _refuse(name):
    def refuse(self, *args, **kwargs):
        raise LibraryShortcut(
            f"the answer called the library's ModelParallelSeq2seq.{name}, whose transfer is "
            f"what this exercise asks you to write: use send and recv "
            f"(dlhack.parallel.model_parallel) on the encoder's results yourself")
    return refuse


# The library's split model does this exercise's transfer in encode, _send_encoding and forward:
# the answers reach none of them (LearnerSplit below overrides what the tests themselves need).
for _name in ("encode", "_send_encoding", "forward", "translate"):
    setattr(ModelParallelSeq2seq, _name, _refuse(_name))


class LearnerSplit(ModelParallelSeq2seq):
    """``ModelParallelSeq2seq`` whose encoder-to-decoder transfer is ``split_encode``.

    Encoder rank: ``forward`` returns ``split_encode(self, comm, xs)`` (the delegate), and the
    ``self.encode`` that it calls is Seq2seq's own. Decoder rank: ``forward`` is Seq2seq's, whose
    ``self.encode(xs)`` is ``split_encode`` (it receives).
    """

    def __init__(self, split_encode, comm, *args, **kwargs):
        super().__init__(comm, *args, **kwargs)
        self.split_encode = split_encode
        self.encoded_in = []  # (train, enable_backprop) of each encode on the encoder rank

    def encode(self, xs):
        if self.stage == "decoder":
            return self.split_encode(self, self.comm, xs)
        # What a training step must keep: dropout on (train mode) and the graph (backprop).
        self.encoded_in.append((bool(chainer.config.train), bool(chainer.config.enable_backprop)))
        return Seq2seq.encode(self, xs)

    def forward(self, xs, ys):
        if self.stage == "encoder":
            return self.split_encode(self, self.comm, xs)
        return Seq2seq.forward(self, xs, ys)


def batch(seed=0, n=5):
    """``n`` pairs of different lengths (padding must change nothing); any id may occur in a
    source sentence, 0 included (only PAD, -1, is padding)."""
    rng = np.random.RandomState(seed)
    xs = [rng.randint(0, N_SRC, size=rng.randint(2, 9)).astype(np.int32) for _ in range(n)]
    xs[0][0] = 0  # the first id: a token, not padding
    ys = [rng.randint(3, N_TGT, size=rng.randint(1, 8)).astype(np.int32) for _ in range(n)]
    return xs, ys


def models(split_encode, comm):
    """The whole model (every rank computes the reference) and the learner's split one."""
    np.random.seed(1)
    whole = Seq2seq(N_SRC, N_TGT, UNITS, LAYERS, dropout=0.0)
    split = LearnerSplit(split_encode, comm, N_SRC, N_TGT, UNITS, LAYERS, dropout=0.0)
    copy_weights(whole, split)
    return whole, split


def step(model, xs, ys, encoder_rank=False):
    """Forward and backward; returns the loss (or delegate) and the gradients by name."""
    loss = model(xs, ys)
    if encoder_rank and not (isinstance(loss, chainer.Variable) and loss.shape == (0,)):
        pytest.fail(f"on rank 0, split_encode should return the empty delegate variable that "
                    f"send() returns (the training loop calls its backward(), which receives the "
                    f"gradients); it returned {type(loss).__name__} {getattr(loss, 'shape', '')}",
                    pytrace=False)
    model.cleargrads()
    loss.backward()
    return loss, {name: p.grad for name, p in model.namedparams()}
