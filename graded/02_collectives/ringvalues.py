"""Following the values through lab 02's ring: what each message a rank sent carried, read from
the first 4 KB of it that the grader's MPI shim logs (the tests' arrays are far smaller).

In a ring's reduce-scatter, the chunk a rank sends at step ``s`` holds the sum of its own array
and the ``s`` ranks' to its left, over some slice of the flat array; in the allgather, every
chunk sent is a slice of the finished sum. Which chunk a rank sends when is the learner's
choice (any slice passes); the values are not. An answer that gets the sum elsewhere (MPI's own
allreduce, rank 0) and sends right-sized messages for show fails here, by name.
"""
import pickletools
import re

import numpy as np

DTYPE_NAME = re.compile(r"^[<>|=]?[fiu][1248]$")  # how a pickled numpy array names its dtype


def payload(message, like):
    """The numbers ``message`` carried, as float64; None when the logged head cannot say.

    A buffer send is read with the item size it was sent with (a float32 array sent as float64
    is read as float64), of ``like``'s kind (float or integer); a pickled send (``comm.sendrecv``
    of an array) through its largest bytes object and the dtype named in the pickle, without
    unpickling it (learner bytes are never unpickled in the grader).
    """
    if message.pickled:
        return _pickled(message.head, message.nbytes)
    if len(message.head) < message.nbytes or message.typesize not in (1, 2, 4, 8):
        return None
    kind = "f" if np.issubdtype(like, np.floating) and message.typesize >= 2 else "i"
    return np.frombuffer(message.head[:message.nbytes], f"<{kind}{message.typesize}").astype(float)


def _pickled(head, nbytes):
    if len(head) < nbytes:
        return None
    data, dtype = None, None
    try:
        for op, arg, _ in pickletools.genops(head):
            if isinstance(arg, (bytes, bytearray)) and (data is None or len(arg) > len(data)):
                data = bytes(arg)
            elif isinstance(arg, str) and dtype is None and DTYPE_NAME.match(arg):
                dtype = arg
    except Exception:  # noqa: BLE001 - not a pickle the grader can follow
        return None
    if data is None or dtype is None or len(data) % np.dtype(dtype).itemsize:
        return None
    return np.frombuffer(data, dtype).astype(float)


def is_slice(values, of, exact):
    """Whether ``values`` equal ``of[a:a + len(values)]`` for some ``a`` (an empty chunk does)."""
    k = len(values)
    for a in range(len(of) - k + 1):
        if np.allclose(values, of[a:a + k], rtol=0 if exact else 1e-5, atol=0 if exact else 1e-5):
            return True
    return False


def ring_values_problem(traffic, rank, arrays, dtype):
    """None when every message ``rank`` sent carried what a ring carries; else what did not.

    ``arrays``: every rank's input, by rank. Call it once the traffic's shape is a ring's: to the
    right neighbour, 2 (size - 1) messages, reduce-scatter's first, or fewer when the array is
    shorter than the rank count and the ring skips its empty chunks (the messages then match
    the ring's steps in order, some steps left out).
    """
    exact = not np.issubdtype(dtype, np.floating)
    steps = ring_steps([np.asarray(a, dtype=float).ravel() for a in arrays], rank)
    skips, t = len(steps) - len(traffic.sends), 0
    for i, message in enumerate(traffic.sends):
        values = payload(message, np.dtype(dtype))
        if values is None:
            return (f"rank {rank}'s message {i + 1} could not be read as an array of numbers "
                    f"(send numpy chunks with comm.Sendrecv): the grader follows the values "
                    f"through the ring")
        fits = [u for u in range(t, min(t + skips + 1, len(steps)))
                if is_slice(values, steps[u][0], exact)]
        if not fits:
            return (f"the sum did not travel through the ring: rank {rank}'s message {i + 1} "
                    f"({steps[min(t, len(steps) - 1)][1]}) carried {_shown(values)}, which is no slice of it"
                    + _elsewhere(traffic))
        skips, t = skips - (fits[0] - t), fits[0] + 1
    return None


def ring_steps(flat, rank):
    """``[(the values a message may be a slice of, the step in words)]``, one per ring step."""
    size, steps = len(flat), []
    for i in range(size - 1):
        left = [(rank - j) % size for j in range(i + 1)]
        steps.append((np.sum([flat[r] for r in left], axis=0), (
            f"reduce-scatter step {i}, which carries " + (
                "a chunk of this rank's own array" if not i else
                f"the sum of ranks {', '.join(map(str, sorted(left)))}'s chunks (its own and "
                f"the {i} to its left)"))))
    total = np.sum(flat, axis=0)
    steps += [(total, f"allgather step {i}, which carries a finished chunk of the serial sum")
              for i in range(size - 1)]
    return steps


def _shown(values):
    if len(values) and not values.any():
        return f"{len(values)} zeros"
    return f"[{', '.join(f'{v:.4g}' for v in values[:4])}{', ...' if len(values) > 4 else ''}]"


def _elsewhere(traffic):
    kinds = sorted({c.kind.removesuffix("_c") for c in traffic.collectives})
    if kinds:
        return (f"; the rank called MPI's {', '.join(kinds)}, so the sum came from there and the "
                f"ring's messages were for show: add each chunk that arrives into yours")
    return ": each step adds the chunk that arrives into this rank's copy and sends that on"


def collectives_problem(traffic, rank):
    """A sentence when ``rank`` called an MPI collective during the test (any communicator)."""
    kinds = sorted({c.kind.removesuffix("_c") for c in traffic.collectives})
    if not kinds:
        return None
    return (f"rank {rank} called MPI's {', '.join(kinds)} (a collective, on a communicator other "
            f"than comm): this exercise builds the sum from point-to-point messages on comm only")
