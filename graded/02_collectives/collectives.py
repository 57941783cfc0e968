"""Shared by the graded tests of lab 02: each rank's data, serial references, a communicator
that allows point-to-point calls only, the traffic each algorithm must make (read from the
grader's MPI shim in the check halves: ``sent_of``), and hints for the commonest wrong answers. What the ring's messages carried is followed in
ringvalues.py."""
import numpy as np
from labtools import block_imports

# The parameters of each point-to-point call, in mpi4py's order, so that positional and keyword
# arguments are read alike; upper-case methods take buffers, lower-case ones Python objects.
SIGNATURES = {
    "Send": ("buf", "dest", "tag"), "Ssend": ("buf", "dest", "tag"),
    "Isend": ("buf", "dest", "tag"), "Issend": ("buf", "dest", "tag"),
    "send": ("obj", "dest", "tag"), "ssend": ("obj", "dest", "tag"),
    "isend": ("obj", "dest", "tag"), "issend": ("obj", "dest", "tag"),
    "Sendrecv": ("buf", "dest", "sendtag", "recvbuf", "source", "recvtag", "status"),
    "Isendrecv": ("buf", "dest", "sendtag", "recvbuf", "source", "recvtag"),
    "sendrecv": ("obj", "dest", "sendtag", "recvbuf", "source", "recvtag", "status"),
    "Sendrecv_replace": ("buf", "dest", "sendtag", "source", "recvtag", "status"),
    "Isendrecv_replace": ("buf", "dest", "sendtag", "source", "recvtag"),
    "Recv": ("buf", "source", "tag", "status"), "Irecv": ("buf", "source", "tag"),
    "recv": ("buf", "source", "tag", "status"), "irecv": ("buf", "source", "tag"),
}
SENDS = {name for name, params in SIGNATURES.items() if "dest" in params}
ALLOWED = set(SIGNATURES) | {"Probe", "Iprobe", "probe", "iprobe", "Get_rank", "Get_size", "rank",
                             "size"}
SEED = 2
block_imports(("dlhack.parallel", "chainermn"),
              "{name} holds the course's own collectives, and this lab asks you to write it "
              "yourself, from point-to-point calls on comm: it cannot be imported here")


class CollectiveNotAllowed(Exception):
    """Raised when an answer calls a collective: this lab builds them from point-to-point calls."""


def elements(buf):
    """How many numbers a message carries: a numpy buffer, ``[buffer, datatype]``, or an object."""
    if isinstance(buf, (list, tuple)) and buf and isinstance(buf[0], np.ndarray):
        buf = buf[0]
    try:
        return int(np.asarray(buf).size)
    except Exception:  # noqa: BLE001 - an object that is not array-like: count it as one
        return 1


class PointToPointComm:
    """Wraps a communicator: point-to-point calls pass through and are recorded; others raise.

    ``sent`` lists this rank's messages in order, as ``(dest, number of elements)``, whichever
    method sent them (``Send``, ``Sendrecv``, ``isend``...). The tests read it to check the
    algorithm, not only the result: who sends to whom, how many messages, how big.
    """

    def __init__(self, comm):
        object.__setattr__(self, "_PointToPointComm__comm", comm)
        object.__setattr__(self, "sent", [])

    @property
    def sends(self):
        return len(self.sent)

    def __getattr__(self, name):
        if name not in ALLOWED:
            raise CollectiveNotAllowed(
                f"comm.{name} is not allowed here: this lab builds allreduce from point-to-point "
                f"calls only (Send, Recv, Sendrecv and their variants)")
        attr = getattr(self.__comm, name)
        if name not in SENDS:
            return attr

        def recorded(*args, **kwargs):
            call = dict(zip(SIGNATURES[name], args))
            call.update(kwargs)
            payload = call.get("buf", call.get("obj", call.get("sendbuf", call.get("sendobj"))))
            self.sent.append((call.get("dest"), elements(payload)))
            return attr(*args, **kwargs)

        return recorded


def sent_of(traffic, itemsize):
    """``[(dest, elements)]``: the messages the grader's MPI shim saw this rank send in the test.

    A buffer send counts its MPI count; a pickled one (``comm.send(obj)``) the bytes of the
    largest array in it over ``itemsize``. Every send counts, through ``comm`` or any other
    communicator: the shim sits below mpi4py.
    """
    sent = []
    for message in traffic.sends:
        if message.pickled:
            data = message.data_bytes()
            count = (message.nbytes if data is None else data) // max(itemsize, 1)
        else:
            count = message.count
        sent.append((message.dest, count))
    return sent


def rank_data(rank, shape, dtype=np.float64):
    """What ``rank`` contributes: reproducible from the seed and the rank alone."""
    rng = np.random.default_rng([SEED, rank])
    if np.issubdtype(dtype, np.integer):
        return rng.integers(-50, 50, size=shape).astype(dtype)
    return rng.standard_normal(shape).astype(dtype)


def serial_sum(size, shape, dtype=np.float64):
    """The elementwise sum of every rank's data, computed in one process (the reference)."""
    total = np.sum([rank_data(r, shape, dtype).astype(np.float64) for r in range(size)], axis=0)
    return total.astype(dtype)


def sum_hint(got, want, x, size):
    """A hint for the usual ways a sum goes wrong ('' when none applies)."""
    if size < 2 or not isinstance(got, np.ndarray) or got.shape != want.shape:
        return ""
    if np.allclose(got, want / size):
        return ": it equals the mean over the ranks, but this function returns the sum"
    if np.allclose(got, x):
        return ": it equals this rank's own input, so the other ranks' values never got added in"
    return ""


def chunk_hint(length, size):
    """For lengths that do not divide by the rank count, where such bugs usually are."""
    if size < 2 or (length % size == 0 and length >= size):
        return ""
    return (f" ({length} elements over {size} ranks: check the chunk boundaries when the length "
            f"does not divide by the rank count; np.array_split gives chunks whose lengths differ "
            f"by at most one, and some are empty when the array is shorter than the rank count)")


def ring_traffic_problem(sent, rank, size, n):
    """None when ``sent`` is a ring allreduce's traffic on ``rank``; else what is wrong, in words.

    A ring sends only to the right neighbour, ``2 (size - 1)`` messages (reduce-scatter, then
    allgather), each a chunk of at most ``ceil(n / size)`` elements; with fewer elements than
    ranks, it may leave out the messages of its empty chunks.
    """
    right = (rank + 1) % size
    others = sorted({dest for dest, _ in sent if dest != right})
    if others:
        return (f"rank {rank} sent to rank{'s' if len(others) > 1 else ''} "
                f"{', '.join(map(str, others))}: in a ring each rank sends only to its right "
                f"neighbour, (rank + 1) % size = {right}, and receives only from its left")
    chunk = -(-n // size)
    big = [k for _, k in sent if k > chunk]
    if big:
        return (f"rank {rank} sent a message of {big[0]} elements; the array has {n}, so a ring "
                f"sends chunks of at most ceil(n / size) = {chunk}: cut the array into size "
                f"chunks and send one chunk per step, never the whole array")
    want = 2 * (size - 1)
    fewest = 2 * (size - 1 - max(0, size - n))  # a ring may skip the empty chunks when n < size
    if not fewest <= len(sent) <= want:
        why = (" (none through comm: was the sum computed some other way, such as MPI.COMM_WORLD?)"
               if not sent else "")
        return (f"rank {rank} sent {len(sent)} messages{why}; a ring allreduce at {size} ranks "
                f"sends 2 (size - 1) = {want}: size - 1 steps of reduce-scatter, then size - 1 of "
                f"allgather, one chunk per step")
    return None


def naive_traffic_problem(sent, rank, size, n):
    """None when ``sent`` is the naive allreduce's traffic: through rank 0, whole arrays."""
    if rank == 0:
        want = list(range(1, size))
        got = sorted(dest for dest, _ in sent)
        if got != want:
            return (f"rank 0 sent to ranks {got}; in the naive allreduce it sends the sum once "
                    f"to every other rank, {want}")
    elif [dest for dest, _ in sent] != [0]:
        return (f"rank {rank} sent to ranks {[dest for dest, _ in sent]}; in the naive allreduce "
                f"every rank other than 0 sends its array once, to rank 0 (through rank 0: "
                f"that is the point of this exercise)")
    small = [k for _, k in sent if k != n]
    if small:
        return (f"rank {rank} sent a message of {small[0]} elements; the naive allreduce sends "
                f"whole arrays ({n} elements)")
    return None
