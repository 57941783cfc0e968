"""The translator split across two ranks (モデル並列, model parallelism): encoder on rank 0,
decoder on rank 1.

    mpiexec -n 2 python -m dlhack.parallel.model_parallel --steps 3      # a few steps: loss and bytes

Lesson 7 (``lessons/07_model_parallel.ipynb``) introduces it. In data parallelism (lesson 3)
every rank holds the whole model and the ranks exchange *gradients*, once per step. Here each
rank holds half of the model, and what crosses the wire are *activations*:

- forward: rank 0 embeds and encodes the source batch, then sends the encoder's final states
  ``hy, cy`` (n_layers, B, H) and, with attention, its outputs ``enc`` (B, S, H), which the
  decoder's attention reads, to rank 1. Rank 1 decodes and computes the loss.
- backward: rank 1 back-propagates down to what it received and sends back the gradients of
  ``hy, cy`` (and ``enc``), the same shapes; rank 0 carries them on through the encoder.

The two messages are on the critical path: rank 1 cannot start before rank 0 has encoded, and
rank 0 cannot start its backward before rank 1 has finished its own (the pipeline bubble: one
rank idles while the other works). Their size grows with the batch and the sentence length,
while data parallelism sends the same gradient bytes (the parameter count) whatever the batch.

Sending is two Chainer functions that carry gradients back in backward, ``send`` and ``recv``
of ``dlhack.parallel.p2p`` (re-exported here, with ``Send``, ``Recv`` and ``Traffic``, which
counts the bytes they move).

Cost per training step, for a batch of ``B`` sentences padded to ``S`` source tokens, ``L``
layers of ``H`` units, float32 (4 bytes):

- forward, rank 0 -> 1: ``hy`` and ``cy`` (``2 L B H`` elements) and, with attention, ``enc``
  (``B S H``): ``4 (2 L B H + B S H)`` bytes in ``1 + 3`` messages (a header, then one per
  array; ``1 + 2`` and ``4 * 2 L B H`` bytes without attention);
- backward, rank 1 -> 0: their gradients, the same bytes in the same number of messages.
- ``translate`` sends the forward message only.

Data parallelism on 2 ranks instead allreduces ``n`` parameters per step, ``4 n`` bytes sent
per rank with the ring, whatever ``B`` and ``S`` (``gradient_bytes``; ``main`` prints both).

``ModelParallelSeq2seq`` is ``dlhack.model.seq2seq.Seq2seq`` with the other rank's links deleted: the
parameter names stay the same, so the same weights can be loaded into both (``copy_weights``)
and every loss and gradient compared (tests/parallel/test_model_parallel.py).
"""
import argparse
import time

import chainer
import numpy as np

from dlhack.model.seq2seq import PAD, Seq2seq, pad
from dlhack.parallel.p2p import Recv, Send, Traffic, mpi_of, recv, recv_arrays, send, send_arrays

ENCODER_LINKS = ("embed_x", "encoder")  # on the encoder rank
DECODER_LINKS = ("embed_y", "decoder", "W_c", "W_o")  # on the decoder rank

__all__ = [  # what this module defines, and the point-to-point names it re-exports from p2p
    "DECODER_LINKS", "ENCODER_LINKS", "ModelParallelSeq2seq", "Recv", "Send", "Traffic",
    "copy_weights", "gradient_bytes", "main", "recv", "recv_arrays", "send", "send_arrays"]


class ModelParallelSeq2seq(Seq2seq):
    """``Seq2seq`` split across two ranks: the encoder half on one, the decoder half on the other.

    Every rank builds the model with the same arguments and calls it on the same batch, as in
    single-process training: ``loss = model(xs, ys); loss.backward(); optimizer.update()``.
    On the decoder rank ``loss`` is the loss of ``Seq2seq``; on the encoder rank it is the
    delegate variable (empty), whose ``backward()`` receives the gradients and finishes the
    encoder's backward. Each rank's optimizer updates the parameters it holds.

    Args:
        comm: an mpi4py communicator (or ours, or ChainerMN's) with at least 2 ranks.
        n_src_vocab, n_tgt_vocab, n_units, n_layers, dropout, attention: as ``Seq2seq``.
        encoder_rank, decoder_rank: where the two halves live; other ranks hold nothing.
    """

    def __init__(self, comm, n_src_vocab, n_tgt_vocab, n_units=128, n_layers=2, dropout=0.1,
                 attention=True, encoder_rank=0, decoder_rank=1):
        super().__init__(n_src_vocab, n_tgt_vocab, n_units, n_layers, dropout, attention)
        self.comm, self.encoder_rank, self.decoder_rank = comm, encoder_rank, decoder_rank
        if mpi_of(comm).size < 2 or encoder_rank == decoder_rank:
            raise ValueError("model parallelism needs two ranks: run under mpiexec -n 2")
        rank = mpi_of(comm).rank
        self.stage = {encoder_rank: "encoder", decoder_rank: "decoder"}.get(rank)
        keep = {"encoder": ENCODER_LINKS, "decoder": DECODER_LINKS}.get(self.stage, ())
        for name in [link.name for link in self.children()]:
            if name not in keep:
                delattr(self, name)  # this half lives on the other rank
        self.traffic = Traffic()

    def encode(self, xs):
        """On the encoder rank, encode; on the decoder rank, receive what the encoder rank sent.

        Same result as ``Seq2seq.encode``: ``(hy, cy, enc, mask)``. The decoder rank makes the
        source mask (B, S) from its own copy of ``xs``, so only lengths matter there.
        """
        if self.stage == "encoder":
            return super().encode(xs)
        received = recv(self.comm, self.encoder_rank, self.traffic, device=self.device)
        enc = received[2] if self.attention else None  # without attention, enc is not sent
        return received[0], received[1], enc, pad(xs, self.xp) != PAD

    def _send_encoding(self, xs):
        # hy, cy: (n_layers, B, H); enc: (B, S, H), read by attention only
        hy, cy, enc, _ = super().encode(xs)
        states = (hy, cy, enc) if self.attention else (hy, cy)
        return send(states, self.comm, self.decoder_rank, self.traffic)

    def forward(self, xs, ys):
        """Encoder rank: encode and send, return the delegate. Decoder rank: the loss."""
        if self.stage == "encoder":
            return self._send_encoding(xs)
        if self.stage == "decoder":
            return super().forward(xs, ys)  # its self.encode(xs) receives from the encoder rank
        raise RuntimeError(f"rank {mpi_of(self.comm).rank} holds no part of this model")

    def translate(self, xs, max_length=50):
        """Greedy translation: the decoder rank returns the id arrays, the encoder rank None."""
        if self.stage == "encoder":
            with chainer.no_backprop_mode(), chainer.using_config("train", False):
                self._send_encoding(xs)
            return None
        return super().translate(xs, max_length)


def copy_weights(source, target):
    """Copy every parameter of ``target`` from the parameter of the same name in ``source``.

    ``source`` is a whole ``Seq2seq``; ``target`` may hold only half of it.
    """
    params = dict(source.namedparams())
    for name, param in target.namedparams():
        param.array[...] = target.device.send(params[name].array)


def gradient_bytes(model):
    """Bytes of every gradient of ``model``: what one data-parallel allreduce sums per step."""
    return sum(param.size * param.dtype.itemsize for param in model.params())


def demo_parser(prog, description):
    """The command line of the split models' demos (this module's and ``tensor_parallel``'s)."""
    p = argparse.ArgumentParser(prog=prog, description=description,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-s", "--steps", type=int, default=3)
    p.add_argument("-b", "--batchsize", type=int, default=32)
    p.add_argument("-u", "--units", type=int, default=128)
    p.add_argument("-l", "--layers", type=int, default=2)
    p.add_argument("--n-train", type=int, default=1000)
    return p


def demo_batches(corpus, args):
    """The demo's ``args.steps`` batches of the training split, in order, as ``(xs, ys)``."""
    for step in range(args.steps):
        batch = corpus.train[step * args.batchsize:(step + 1) * args.batchsize]
        yield [x for x, _ in batch], [y for _, y in batch]


def main(argv=None):
    """Train the split translator a few steps on the embedded corpus; the decoder rank reports."""
    args = demo_parser("python -m dlhack.parallel.model_parallel", __doc__).parse_args(argv)
    from mpi4py import MPI

    from dlhack.corpus import default_corpus

    comm = MPI.COMM_WORLD.Dup()
    corpus = default_corpus(seed=0, n_train=args.n_train, n_dev=10, n_test=10)  # on both ranks
    np.random.seed(0)
    model = ModelParallelSeq2seq(comm, len(corpus.src_vocab), len(corpus.tgt_vocab),
                                 args.units, args.layers)
    optimizer = chainer.optimizers.Adam()
    optimizer.setup(model)
    whole = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), args.units, args.layers)
    for step, (xs, ys) in enumerate(demo_batches(corpus, args)):
        start = time.perf_counter()
        loss = model(xs, ys)
        model.cleargrads()
        loss.backward()
        optimizer.update()
        seconds = time.perf_counter() - start
        if model.stage == "decoder":  # the rank that has the loss prints
            print(f"step {step}: loss {float(loss.array):.3f}, {seconds * 1000:.0f} ms")
    sent = comm.gather((model.traffic.forward_bytes, model.traffic.backward_bytes), root=1)
    if comm.rank == 1:
        forward, backward = sent[0][0], sent[1][1]
        print(f"per step, rank 0 -> 1 (activations): {forward / args.steps / 1e6:.3f} MB; "
              f"rank 1 -> 0 (their gradients): {backward / args.steps / 1e6:.3f} MB")
        print(f"data parallelism would allreduce {gradient_bytes(whole) / 1e6:.3f} MB of "
              f"gradients per step, whatever the batch")
    comm.Free()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
