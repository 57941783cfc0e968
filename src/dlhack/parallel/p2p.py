"""Point-to-point send and receive of Chainer variables, with gradients flowing back.

    delegate = send((hy, cy), comm, dest=1)      # rank 0; later delegate.backward()
    hy, cy = recv(comm, source=0)                 # rank 1; their gradients go back in backward

What model parallelism (``model_parallel``) moves between its two halves. ``send`` and ``recv``
are Chainer functions, as ChainerMN's ``chainermn.functions.send`` / ``recv`` are (read
chainermn/functions/point_to_point_communication.py):

- ``Send``: forward sends its inputs to ``dest`` and returns an empty *delegate* variable;
  calling ``backward()`` on the delegate receives the gradients of what was sent from ``dest``
  and back-propagates them through the sender's graph.
- ``Recv``: forward receives arrays from ``source``; backward sends their gradients back.

They work on any mpi4py communicator, or on ours or ChainerMN's through its ``mpi_comm``, and
count what they move in a ``Traffic``.

Cost, per ``send``/``recv`` pair of ``k`` arrays holding ``m`` elements in all (itemsize ``s``):

- forward: ``1 + k`` messages from the sender, a pickled header (shapes and dtypes, a few
  dozen bytes, left out of ``Traffic``'s byte counts) and one buffer per array: ``m * s`` bytes;
- backward: ``1 + k`` messages the other way with the gradients, the same ``m * s`` bytes
  (a gradient the loss did not reach is sent as zeros, so the count never changes).

Device (CuPy) arrays are copied to the host before sending and back to the device after
receiving: the mpich wheel this course installs is not CUDA-aware.
"""
import time
from dataclasses import dataclass, field

import chainer
import numpy as np


@dataclass
class Traffic:
    """What one rank sent (array bytes; the small shape headers are left out) and when.

    ``events`` holds ``(what, start, end, nbytes)`` with ``time.perf_counter`` times, ``what``
    one of ``"send forward"``, ``"recv forward"``, ``"send backward"``, ``"recv backward"``.
    A receive's interval includes the time spent waiting for the other rank. ``messages``
    counts the MPI messages sent, headers included.
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


def mpi_of(comm):
    """The mpi4py communicator under ``comm`` (ours and ChainerMN's keep it in ``mpi_comm``)."""
    return getattr(comm, "mpi_comm", comm)


def send_arrays(arrays, comm, dest, tag=0):
    """Send a list of arrays: one pickled header (shapes, dtypes), then each buffer; -> bytes."""
    host = [np.ascontiguousarray(chainer.backend.CpuDevice().send(a)) for a in arrays]
    mpi = mpi_of(comm)
    mpi.send([(a.shape, a.dtype.str) for a in host], dest=dest, tag=tag)
    for a in host:
        mpi.Send(a, dest=dest, tag=tag)
    return sum(a.nbytes for a in host)


def recv_arrays(comm, source, tag=0):
    """Receive what ``send_arrays`` sent: a list of numpy arrays."""
    mpi = mpi_of(comm)
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
