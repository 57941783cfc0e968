"""Shared by the graded tests of lab 02: each rank's data, serial references, a communicator
that allows point-to-point calls only, and hints for the commonest wrong answers."""
import numpy as np

POINT_TO_POINT = {"Send", "Recv", "Sendrecv", "Sendrecv_replace", "Isend", "Irecv", "Ssend",
                  "Issend", "send", "recv", "sendrecv", "isend", "irecv", "ssend", "issend",
                  "Probe", "Iprobe", "probe", "iprobe", "Get_rank", "Get_size", "rank", "size"}
SENDS = {"Send", "Sendrecv", "Sendrecv_replace", "Isend", "Ssend", "Issend", "send", "sendrecv",
         "isend", "ssend", "issend"}
SEED = 2


class CollectiveNotAllowed(Exception):
    """Raised when an answer calls a collective: this lab builds them from point-to-point calls."""


class PointToPointComm:
    """Wraps a communicator: point-to-point calls pass through (sends are counted), others raise."""

    def __init__(self, comm):
        self._comm = comm
        self.sends = 0

    def __getattr__(self, name):
        if name not in POINT_TO_POINT:
            raise CollectiveNotAllowed(
                f"comm.{name} is not allowed here: this lab builds allreduce from point-to-point "
                f"calls only (Send, Recv, Sendrecv and their variants)")
        attr = getattr(self._comm, name)
        if name not in SENDS:
            return attr

        def counted(*args, **kwargs):
            self.sends += 1
            return attr(*args, **kwargs)

        return counted


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
    if length % size == 0 and length >= size:
        return ""
    return (f" ({length} elements over {size} ranks: check the chunk boundaries when the length "
            f"does not divide by the rank count; np.array_split gives chunks whose lengths differ "
            f"by at most one, and some are empty when the array is shorter than the rank count)")
