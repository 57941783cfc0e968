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

Sending is two Chainer functions that carry gradients back in backward, as ChainerMN's
``chainermn.functions.send`` / ``recv`` do (read chainermn/functions/point_to_point_communication
.py): ``send`` returns an empty "delegate" variable whose ``backward()`` waits for the gradients
of what it sent; ``recv`` returns variables whose gradients are sent back in backward. Ours work
on any mpi4py communicator (or one of ours, or ChainerMN's, through its ``mpi_comm``) and count
the bytes they move (``Traffic``).

``ModelParallelSeq2seq`` is ``dlhack.model.seq2seq.Seq2seq`` with the other rank's links deleted: the
parameter names stay the same, so the same weights can be loaded into both (``copy_weights``)
and every loss and gradient compared (tests/test_model_parallel.py).
"""
import argparse
import time
from dataclasses import dataclass, field

import chainer
import numpy as np

from dlhack.model.seq2seq import PAD, Seq2seq, pad

ENCODER_LINKS = ("embed_x", "encoder")  # on the encoder rank
DECODER_LINKS = ("embed_y", "decoder", "W_c", "W_o")  # on the decoder rank


@dataclass
class Traffic:
    """What one rank sent (array bytes; the small shape headers are left out) and when.

    ``events`` holds ``(what, start, end, nbytes)`` with ``time.perf_counter`` times, ``what``
    one of ``"send forward"``, ``"recv forward"``, ``"send backward"``, ``"recv backward"``.
    A receive's interval includes the time spent waiting for the other rank.
    """

    forward_bytes: int = 0
    backward_bytes: int = 0
    messages: int = 0
    events: list = field(default_factory=list)

    def add(self, what, start, nbytes, messages):
        """Record a transfer that began at ``start`` and ends now; count what was sent."""
        self.events.append((what, start, time.perf_counter(), nbytes))
        if what.startswith("send"):
            self.messages += messages
            if what.endswith("forward"):
                self.forward_bytes += nbytes
            else:
                self.backward_bytes += nbytes


def _mpi(comm):
    """The mpi4py communicator under ``comm`` (ours and ChainerMN's keep it in ``mpi_comm``)."""
    return getattr(comm, "mpi_comm", comm)


def send_arrays(arrays, comm, dest, tag=0):
    """Send a list of arrays: one pickled header (shapes, dtypes), then each buffer; -> bytes."""
    host = [np.ascontiguousarray(chainer.backend.CpuDevice().send(a)) for a in arrays]
    mpi = _mpi(comm)
    mpi.send([(a.shape, a.dtype.str) for a in host], dest=dest, tag=tag)
    for a in host:
        mpi.Send(a, dest=dest, tag=tag)
    return sum(a.nbytes for a in host)


def recv_arrays(comm, source, tag=0):
    """Receive what ``send_arrays`` sent: a list of numpy arrays."""
    mpi = _mpi(comm)
    header = mpi.recv(source=source, tag=tag)
    arrays = []
    for shape, dtype in header:
        buf = np.empty(shape, dtype)
        mpi.Recv(buf, source=source, tag=tag)
        arrays.append(buf)
    return arrays


class Send(chainer.FunctionNode):
    """Forward: send the inputs to ``dest``. Backward: receive their gradients from ``dest``."""

    def __init__(self, comm, dest, traffic, tag):
        self.comm, self.dest, self.traffic, self.tag = comm, dest, traffic, tag

    def forward(self, inputs):
        self.devices = [chainer.backend.get_device_from_array(x) for x in inputs]
        start = time.perf_counter()
        nbytes = send_arrays(inputs, self.comm, self.dest, self.tag)
        self.traffic.add("send forward", start, nbytes, 1 + len(inputs))
        return self.devices[0].xp.zeros((0,), np.float32),  # the delegate: no data

    def backward(self, indexes, grad_outputs):
        start = time.perf_counter()
        grads = recv_arrays(self.comm, self.dest, self.tag)
        self.traffic.add("recv backward", start, sum(g.nbytes for g in grads), 0)
        return tuple(chainer.Variable(self.devices[i].send(grads[i])) for i in indexes)


class Recv(chainer.FunctionNode):
    """Forward: receive arrays from ``source``. Backward: send their gradients to ``source``."""

    def __init__(self, comm, source, traffic, tag, device):
        self.comm, self.source, self.traffic, self.tag = comm, source, traffic, tag
        self.device = device

    def forward(self, inputs):
        start = time.perf_counter()
        arrays = recv_arrays(self.comm, self.source, self.tag)
        self.traffic.add("recv forward", start, sum(a.nbytes for a in arrays), 0)
        self.shapes = [(a.shape, a.dtype) for a in arrays]
        return tuple(self.device.send(a) for a in arrays)

    def backward(self, indexes, grad_outputs):
        # An output the loss did not use has no gradient: it is sent as zeros, so that the
        # sender always gets one array per array it sent.
        grads = [np.zeros(shape, dtype) if g is None else g.array
                 for (shape, dtype), g in zip(self.shapes, grad_outputs)]
        start = time.perf_counter()
        nbytes = send_arrays(grads, self.comm, self.source, self.tag)
        self.traffic.add("send backward", start, nbytes, 1 + len(grads))
        return chainer.Variable(self.device.xp.zeros((0,), np.float32)),  # for the dummy input


def send(xs, comm, dest, traffic=None, tag=0):
    """Send variables to rank ``dest``; returns the delegate variable.

    Call ``backward()`` on the delegate (an empty variable, as ChainerMN's ``send`` returns) to
    receive the gradients of ``xs`` from ``dest`` and back-propagate them through ``xs``.

    Args:
        xs: a tuple of ``chainer.Variable`` (or arrays).
        comm: an mpi4py communicator, or ours or ChainerMN's.
        dest: the receiving rank, which must call ``recv`` with ``source`` = this rank.
        traffic: a ``Traffic`` to count into (default: a throwaway one).
        tag: the MPI tag, to tell apart several transfers between the same two ranks.
    """
    return Send(comm, dest, traffic or Traffic(), tag).apply(tuple(xs))[0]


def recv(comm, source, traffic=None, tag=0, device=None):
    """Receive the variables rank ``source`` sent with ``send``; returns them as a tuple.

    In backward, their gradients go back to ``source`` (zeros for one the loss did not use).
    ``device``: where to put them (default: the CPU).
    """
    device = device or chainer.get_device("@numpy")
    # A function node needs an input for backward to reach it: a dummy that requires grad.
    dummy = chainer.Variable(device.xp.zeros((0,), np.float32))
    return Recv(comm, source, traffic or Traffic(), tag, device).apply((dummy,))


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
        if _mpi(comm).size < 2 or encoder_rank == decoder_rank:
            raise ValueError("model parallelism needs two ranks: run under mpiexec -n 2")
        rank = _mpi(comm).rank
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
        raise RuntimeError(f"rank {_mpi(self.comm).rank} holds no part of this model")

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


def main(argv=None):
    """Train the split translator a few steps on the embedded corpus; the decoder rank reports."""
    p = argparse.ArgumentParser(prog="python -m dlhack.parallel.model_parallel", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-s", "--steps", type=int, default=3)
    p.add_argument("-b", "--batchsize", type=int, default=32)
    p.add_argument("-u", "--units", type=int, default=128)
    p.add_argument("-l", "--layers", type=int, default=2)
    p.add_argument("--n-train", type=int, default=1000)
    args = p.parse_args(argv)
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
    for step in range(args.steps):
        batch = corpus.train[step * args.batchsize:(step + 1) * args.batchsize]
        start = time.perf_counter()
        loss = model([x for x, _ in batch], [y for _, y in batch])
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
