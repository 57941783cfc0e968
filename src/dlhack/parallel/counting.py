"""An mpi4py communicator that counts the calls this rank makes and the bytes it sends.

    counting = CountingComm(MPI.COMM_WORLD.Dup())   # pass it wherever a comm goes
    ...                                              # one training step
    calls, sent = counting.reset()                   # Counters by method: calls, bytes

The tests check the costs the parallel modules' docstrings state with it
(tests/parallel/test_costs.py), and lesson 7 counts a step of the layer-wise split
(``model_parallel``) beside one of the tensor-parallel output layer (``tensor_parallel``).

Cost: none on the wire; a ``pickle.dumps`` of each object (not array) sent, to count its bytes.
"""
import pickle
from collections import Counter

import numpy as np
from mpi4py import MPI

POINT_TO_POINT = ("Send", "send", "Sendrecv")  # the payload is the first argument
RECEIVES = ("Recv", "recv")
COLLECTIVES = ("Bcast", "bcast", "gather", "allgather", "Allgather", "Allreduce", "allreduce")


def payload_bytes(payload):
    """Bytes of an array buffer (or ``[buffer, datatype]``), or of a pickled object."""
    if isinstance(payload, (list, tuple)) and payload and isinstance(payload[0], np.ndarray):
        payload = payload[0]
    if isinstance(payload, np.ndarray):
        return payload.nbytes
    return len(pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL))


class CountingComm:
    """Wraps an mpi4py communicator; ``calls[name]`` and ``sent[name]`` (bytes) per method.

    Point-to-point sends count their payload; a broadcast counts it on the root only, a gather
    on every rank but the root (the root's own part does not travel); an allreduce counts the
    array (what MPI moves for it is MPI's business). Receives count calls only.
    """

    def __init__(self, comm):
        self.comm = comm
        self.calls, self.sent = Counter(), Counter()

    def reset(self):
        """Forget what was counted so far; returns ``(calls, sent)`` as they were."""
        counted = (self.calls, self.sent)
        self.calls, self.sent = Counter(), Counter()
        return counted

    def totals(self):
        """``(messages, bytes)`` sent so far: every counted call but receives, and its bytes."""
        messages = sum(n for name, n in self.calls.items() if name not in RECEIVES)
        return messages, sum(self.sent.values())

    def __getattr__(self, name):  # only for names this wrapper lacks: everything MPI has
        method = getattr(self.comm, name)
        if name not in POINT_TO_POINT + RECEIVES + COLLECTIVES:
            return method

        def counted(*args, **kwargs):
            self.calls[name] += 1
            self.sent[name] += self._bytes(name, args, kwargs)
            return method(*args, **kwargs)

        return counted

    def _bytes(self, name, args, kwargs):
        if name in RECEIVES:
            return 0
        payload = args[0] if args else next(iter(kwargs.values()))
        if payload is MPI.IN_PLACE:  # Allreduce(IN_PLACE, buffer): the buffer is what is sent
            payload = args[1]
        if name in ("Bcast", "bcast", "gather"):
            root = args[1] if len(args) > 1 else kwargs.get("root", 0)
            if (self.comm.rank == root) != (name != "gather"):
                return 0
        return payload_bytes(payload)
