"""One layer split over ranks (テンソル並列, tensor parallelism): the output layer, by vocabulary.

The translator's output layer has its vocabulary cut into slices, one slice per rank.

    mpiexec -n 2 python -m dlhack.parallel.tensor_parallel --steps 3    # loss, check, messages

Lesson 7 (``lessons/07_model_parallel.ipynb``) introduces it after the layer-wise split of
``model_parallel``. There each rank holds whole layers; here every rank holds a *part of one
layer*. Every rank runs the same encoder and decoder (the same weights, the same batch) and holds
the rows ``vocab_range(n_tgt_vocab, rank, size)`` of the output layer ``W_o`` (V, H), the matrix
that grows with the vocabulary: it computes the logits of its own words only, (N, V_r) for the
N = B x T target positions (T: the longest target sentence plus its ``<eos>``). The cross-entropy over the whole vocabulary then needs, per position,
three numbers from every rank (Megatron-LM's vocabulary-parallel cross-entropy):

1. ``Allreduce(MAX)`` of each rank's largest logit, subtracted before ``exp`` so that it cannot
   overflow (every rank must subtract the same number, or the sums below do not add up);
2. ``Allreduce(SUM)`` of ``exp(logit - max)`` over each rank's words: the softmax denominator;
3. ``Allreduce(SUM)`` of the target's logit, which only the rank holding that word has (the
   others add 0). Then ``loss = log(sum) + max - target logit``, the same on every rank.

Backward of the loss is local: each rank's gradient of its logits is ``softmax - one-hot`` on
its own columns. But every rank fed the *same* features to its slice, so the features' gradient
is the sum of every rank's part: one ``Allreduce(SUM)`` of N x H numbers (``CopyToRanks``,
identity forward, allreduce backward: Megatron's "f"). After it every rank's encoder and decoder
get the gradients of one process, and their parameters need no allreduce.

Cost per training step, on every rank, for N target positions and H units, float32: forward 3 ``Allreduce`` of N elements (``12 N`` bytes); backward 1
``Allreduce`` of N H elements (``4 N H`` bytes). Greedy ``translate``: one ``allgather`` of the
(B, V_r) logits per output word. (Sums 2 and 3 could travel as one message of 2 N; they are
kept apart to read.) Memory: a rank holds ``V_r / V`` of ``W_o``, its gradient and its logits (the whole ``W_o`` is
made once, in ``__init__``, to take the slice).

Every rank builds ``TensorParallelSeq2seq`` from the same numpy seed: it makes the whole
``Seq2seq``'s weights and keeps its slice of ``W_o``, so it holds exactly what a one-process
``Seq2seq`` built from that seed holds (tests/parallel/test_tensor_parallel.py compares loss,
every gradient and a few Adam steps at 1, 2 and 3 ranks). With ``dropout > 0`` every rank must
draw the same masks: seed numpy the same on every rank.
"""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from mpi4py import MPI

from dlhack.model.seq2seq import PAD, Seq2seq
from dlhack.parallel.model_parallel import demo_batches, demo_parser
from dlhack.parallel.p2p import mpi_of

__all__ = ["CopyToRanks", "TensorParallelSeq2seq", "VocabParallelCrossEntropy", "allreduce",
           "main", "vocab_parallel_cross_entropy", "vocab_range"]


def vocab_range(n_vocab, rank, size):
    """The ids ``[start, stop)`` that ``rank`` of ``size`` holds; the first ``n_vocab % size``
    ranks hold one more (29 words on 3 ranks: 0-9, 10-19, 20-28)."""
    base, extra = divmod(n_vocab, size)
    start = rank * base + min(rank, extra)
    return start, start + base + (rank < extra)


def allreduce(comm, array, op=MPI.SUM):
    """``op`` of ``array`` over every rank, as a new array where ``array`` lives.

    Device (CuPy) arrays go through the host: the course's MPI is not CUDA-aware.
    """
    host = np.ascontiguousarray(chainer.backend.CpuDevice().send(array))
    out = np.empty_like(host)
    mpi_of(comm).Allreduce(host, out, op=op)
    return chainer.backend.get_device_from_array(array).send(out)


class CopyToRanks(chainer.FunctionNode):
    """Forward: the input as it is (every rank holds the same). Backward: sum the gradient over
    ranks, since each rank's part of the layer contributed its own share of it."""

    def __init__(self, comm):
        self.comm = comm

    def forward(self, inputs):
        return inputs[0],

    def backward(self, indexes, grad_outputs):
        return chainer.Variable(allreduce(self.comm, grad_outputs[0].array)),


class VocabParallelCrossEntropy(chainer.FunctionNode):
    """Softmax cross-entropy of logits split by columns: this rank holds ids [start, start + V_r).

    Forward: (N, V_r) logits -> (N,) losses, the same on every rank, 0 where ``t`` is PAD.
    Backward: ``softmax - one-hot`` on this rank's columns, times the losses' gradient.
    """

    def __init__(self, comm, t, start, ignore_label=PAD):
        self.comm, self.t, self.start, self.ignore_label = comm, t, start, ignore_label

    def forward(self, inputs):
        logits, = inputs  # (N, V_r): this rank's words only
        xp = chainer.backend.get_array_module(logits)
        top = allreduce(self.comm, logits.max(axis=1), MPI.MAX)  # (N,): the largest of all V
        exp = xp.exp(logits - top[:, None])
        total = allreduce(self.comm, exp.sum(axis=1))  # (N,): the softmax's denominator
        local_t = self.t - self.start  # the target's column here, when this rank holds it
        mine = (local_t >= 0) & (local_t < logits.shape[1])
        picked = logits[xp.arange(len(local_t)), xp.where(mine, local_t, 0)]
        target = allreduce(self.comm, xp.where(mine, picked, logits.dtype.type(0)))  # (N,)
        self.softmax, self.local_t, self.mine = exp / total[:, None], local_t, mine
        loss = xp.log(total) + top - target
        return xp.where(self.t == self.ignore_label, loss.dtype.type(0), loss),

    def backward(self, indexes, grad_outputs):
        gy = grad_outputs[0].array  # (N,)
        xp = chainer.backend.get_array_module(gy)
        grad = self.softmax.copy()  # (N, V_r)
        rows = xp.flatnonzero(self.mine)
        grad[rows, self.local_t[rows]] -= 1
        grad *= xp.where(self.t == self.ignore_label, gy.dtype.type(0), gy)[:, None]
        return chainer.Variable(grad),


def vocab_parallel_cross_entropy(logits, t, comm, start, ignore_label=PAD):
    """Each position's softmax cross-entropy (N,) from this rank's logits (N, V_r) of the ids
    ``[start, start + V_r)``; ``t`` (N,) the target ids of the *whole* vocabulary."""
    return VocabParallelCrossEntropy(comm, t, start, ignore_label).apply((logits,))[0]


class TensorParallelSeq2seq(Seq2seq):
    """``Seq2seq`` whose output layer ``W_o`` holds only this rank's rows of the vocabulary.

    Build it on every rank with the same arguments after the same ``np.random.seed``, then train
    as one process does: ``loss = model(xs, ys); loss.backward(); optimizer.update()``. Every
    rank gets the same loss; each rank's optimizer updates its copy of the replicated links and
    its own slice of ``W_o``.

    Args:
        comm: an mpi4py communicator (or ours, or ChainerMN's), of at most ``n_tgt_vocab`` ranks.
        n_src_vocab, n_tgt_vocab, n_units, n_layers, dropout, attention: as ``Seq2seq``.
    """

    def __init__(self, comm, n_src_vocab, n_tgt_vocab, n_units=128, n_layers=2, dropout=0.1,
                 attention=True):
        super().__init__(n_src_vocab, n_tgt_vocab, n_units, n_layers, dropout, attention)
        mpi = mpi_of(comm)
        if mpi.size > n_tgt_vocab:
            raise ValueError(f"{n_tgt_vocab} words cannot be split over {mpi.size} ranks")
        self.comm, self.n_tgt_vocab = comm, n_tgt_vocab
        self.vocab_start, self.vocab_stop = vocab_range(n_tgt_vocab, mpi.rank, mpi.size)
        whole = self.W_o  # made from the seed, as one process makes it; keep this rank's rows
        rows = slice(self.vocab_start, self.vocab_stop)
        del self.W_o
        with self.init_scope():
            self.W_o = L.Linear(n_units, self.vocab_stop - self.vocab_start,
                                initialW=whole.W.array[rows], initial_bias=whole.b.array[rows])

    def logits(self, features):
        """Features (B, T, H) -> this rank's logits (B*T, V_r); in backward, the features'
        gradient is summed over ranks."""
        B, T, H = features.shape
        x = F.dropout(F.reshape(features, (B * T, H)), self.dropout)
        return self.W_o(CopyToRanks(self.comm).apply((x,))[0])

    def cross_entropy(self, logits, t):
        """Each position's loss (B*T,) over the whole vocabulary, from this rank's logits."""
        return vocab_parallel_cross_entropy(logits, t, self.comm, self.vocab_start)

    def next_ids(self, features):
        """Greedy choice over the whole vocabulary: every rank's logits, gathered (B,) int32."""
        local = chainer.backend.CpuDevice().send(self.logits(features).array)
        every = np.concatenate(mpi_of(self.comm).allgather(local), axis=1)  # (B, V), in id order
        return self.xp.asarray(every.argmax(axis=1).astype(np.int32))


def _train_step(model, optimizer, xs, ys):
    loss = model(xs, ys)
    model.cleargrads()
    loss.backward()
    optimizer.update()
    return float(loss.array)


def main(argv=None):
    """Train a few steps beside one process on the embedded corpus; rank 0 prints both losses."""
    args = demo_parser("python -m dlhack.parallel.tensor_parallel", __doc__).parse_args(argv)
    from dlhack.corpus import default_corpus
    from dlhack.parallel.counting import CountingComm

    comm = CountingComm(MPI.COMM_WORLD.Dup())
    corpus = default_corpus(seed=0, n_train=args.n_train, n_dev=10, n_test=10)  # on every rank
    sizes = (len(corpus.src_vocab), len(corpus.tgt_vocab), args.units, args.layers, 0.0)
    np.random.seed(0)  # the same weights on every rank, and in the one-process model
    split = TensorParallelSeq2seq(comm, *sizes)
    np.random.seed(0)
    whole = Seq2seq(*sizes)
    optimizers = [chainer.optimizers.Adam().setup(model) for model in (split, whole)]
    for step, (xs, ys) in enumerate(demo_batches(corpus, args)):
        comm.reset()
        loss = _train_step(split, optimizers[0], xs, ys)
        messages, nbytes = comm.totals()
        want = _train_step(whole, optimizers[1], xs, ys)
        if comm.rank == 0:  # only rank 0 prints
            print(f"step {step}: loss {loss:.5f} on {comm.size} ranks, {want:.5f} in one "
                  f"process; {messages} messages, {nbytes / 1e3:.1f} kB sent per rank")
    comm.Free()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
