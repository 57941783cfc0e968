"""Shared by the graded tests of lab 07_tensor_parallel: drawn cases (vocabulary, slices, batch,
logits), the one-process references, a communicator that records every call, and the checks of
the traffic and of the values, with hints for the commonest wrong answers.

Each test draws its cases afresh: rank 0 draws a seed and broadcasts it (on the test's own
communicator, before the learner's code runs), every rank makes the same logits from it, and
hands the learner only its slice. A failure names the case, seed included.
"""
import os

import numpy as np
from labtools import block_imports
from mpi4py import MPI

block_imports(("dlhack.parallel.tensor_parallel",),
              "{name} holds the course's own vocabulary-parallel cross-entropy, which this lab "
              "asks you to write: it cannot be imported here")

# Calls that move no data; everything else that is called on comm is recorded.
QUIET = {"Get_rank", "Get_size", "rank", "size", "Barrier", "barrier"}
ALLREDUCES = {"Allreduce", "allreduce", "Iallreduce"}
OP_NAMES = [(MPI.MAX, "MAX"), (MPI.SUM, "SUM"), (MPI.MIN, "MIN"), (MPI.PROD, "PROD")]  # Op: unhashable


def op_name(op):
    """``"MAX"`` for ``MPI.MAX`` and so on; ``""`` for None."""
    if op is None:
        return ""
    return next((label for known, label in OP_NAMES if op == known), str(op))


def elements(buf):
    """How many numbers a message carries: a numpy buffer, ``[buffer, datatype]``, or an object."""
    if isinstance(buf, (list, tuple)) and buf and isinstance(buf[0], np.ndarray):
        buf = buf[0]
    try:
        return int(np.asarray(buf).size)
    except Exception:  # noqa: BLE001 - an object that is not array-like: count it as one
        return 1


class RecordingComm:
    """Wraps a communicator; ``calls`` lists ``(method, op name, elements)`` of every call that
    may move data, whichever method it is (collectives, point-to-point, ``Dup``...)."""

    def __init__(self, comm):
        object.__setattr__(self, "_comm", comm)
        object.__setattr__(self, "calls", [])

    def __getattr__(self, name):
        attr = getattr(self._comm, name)
        if name in QUIET or not callable(attr):
            return attr

        def recorded(*args, **kwargs):
            payload = args[0] if args else next(iter(kwargs.values()), None)
            if payload is MPI.IN_PLACE and len(args) > 1:
                payload = args[1]
            op = kwargs.get("op")
            if op is None and name in ALLREDUCES:
                position = 2 if name[0].isupper() else 1  # Allreduce(send, recv, op), allreduce(obj, op)
                op = args[position] if len(args) > position else MPI.SUM
            self.calls.append((name, op_name(op), elements(payload)))
            return attr(*args, **kwargs)

        return recorded


def draw_seed(comm):
    """A fresh seed, the same on every rank (``DLHACK_LAB_SEED`` replays one)."""
    seed = os.environ.get("DLHACK_LAB_SEED")
    seed = int(seed) if seed else int.from_bytes(os.urandom(4), "little")
    return comm.bcast(seed if comm.rank == 0 else None, root=0)


class Case:
    """One drawn case: ``n`` positions, ``v`` words cut into ``size`` uneven slices, logits
    (n, v) float64, targets (n,) that include the first and last word of every slice."""

    def __init__(self, seed, size, n, v, offset):
        rng = np.random.RandomState(seed)
        self.seed, self.size, self.n, self.v, self.offset = seed, size, n, v, offset
        inner = np.sort(rng.choice(np.arange(1, v), size=size - 1, replace=False))
        self.cuts = [0, *inner.tolist(), v]
        self.logits = rng.normal(scale=3.0, size=(n, v))
        # Large logits on some rows: exp overflows unless the maximum is subtracted first.
        self.logits += offset * rng.randint(0, 2, size=(n, 1))
        edges = sorted({c for c in self.cuts[:-1]} | {c - 1 for c in self.cuts[1:]})
        self.targets = rng.randint(0, v, size=n)
        picks = rng.permutation(edges)[:n]
        self.targets[rng.permutation(n)[:len(picks)]] = picks
        self.edges = set(edges)

    def slice_of(self, rank):
        return self.cuts[rank], self.cuts[rank + 1]

    def owner(self, word):
        return int(np.searchsorted(self.cuts, word, side="right") - 1)

    def describe(self):
        slices = ", ".join(f"{a}..{b - 1}" for a, b in zip(self.cuts[:-1], self.cuts[1:]))
        big = f", {self.offset:g} added to some rows" if self.offset else ""
        return (f"[case: N={self.n} positions, V={self.v} words in slices {slices}{big}; "
                f"targets {self.targets.tolist()}; seed {self.seed}]")


def draw_cases(comm, count):
    """``count`` cases for this rank count, the same on every rank: one with a slice per word
    when the vocabulary allows, one with a single position, one with large logits, the rest drawn."""
    rng = np.random.RandomState(draw_seed(comm))
    size, cases = comm.size, []
    for k in range(count):
        v = size if k == 0 else int(rng.randint(size, size + 40))
        n = 1 if k == 1 else int(rng.randint(2 * size, 2 * size + 10))
        offset = 1000.0 if k in (2, count - 1) else 0.0
        cases.append(Case(int(rng.randint(2 ** 31)), size, n, v, offset))
    return cases


def reference_losses(logits, targets):
    """One process's cross-entropy of each position, (N,)."""
    top = logits.max(axis=1)
    total = np.exp(logits - top[:, None]).sum(axis=1)
    return np.log(total) + top - logits[np.arange(len(targets)), targets]


def reference_grad(logits, targets):
    """One process's gradient of the mean loss, (N, V)."""
    top = logits.max(axis=1, keepdims=True)
    grad = np.exp(logits - top)
    grad /= grad.sum(axis=1, keepdims=True)
    grad[np.arange(len(targets)), targets] -= 1.0
    return grad / len(targets)


def as_array(got, shape, what):
    """``got`` as a float array of ``shape``, or a sentence saying what is wrong with it."""
    if got is None:
        return None, f"{what} returned None: did the function forget to `return`?"
    if hasattr(got, "array"):  # a Chainer variable
        got = got.array
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        return None, f"{what} returned a {type(got).__name__}, not an array of numbers"
    if got.shape != shape:
        return None, f"{what} returned shape {got.shape}, expected {shape}"
    return got, None


def traffic_problem(calls, n, size, most_calls, most_elements):
    """None when ``calls`` are at most ``most_calls`` allreduces of ``most_elements`` numbers
    in all, a MAX among them; else a sentence saying what was sent instead."""
    other = [c for c in calls if c[0] not in ALLREDUCES]
    if other:
        name, _, count = other[0]
        return (f"comm.{name} was called ({count} numbers): use only allreduces of a few numbers "
                f"per position; gathering or sending the logits themselves moves N x V_r "
                f"numbers, which is what splitting the layer avoids (and every message must go "
                f"through comm itself, so that it can be counted)")
    if size > 1 and not calls:
        return ("nothing went through comm: every rank must combine its part through the comm "
                "it is given (not MPI.COMM_WORLD or a copy), so the check can count it")
    total = sum(c[2] for c in calls)
    if len(calls) > most_calls:
        return (f"{len(calls)} allreduces for N={n} positions: send each quantity for all "
                f"positions in one message (an array of N), at most {most_calls} allreduces")
    if total > most_elements:
        return (f"{total} numbers allreduced for N={n} positions, more than {most_elements}: "
                f"only the maximum, the sum of exponentials and the target's logit need to "
                f"travel, N numbers each, never the logits")
    if size > 1 and not any(c[1] == "MAX" for c in calls):
        return ("no allreduce with MPI.MAX: every rank must subtract the same maximum, the "
                "largest logit of all ranks")
    return None


def close(got, want):
    return np.isclose(got, want, rtol=1e-7, atol=1e-8)


def first_failure(cases, check):
    """Runs ``check(case)`` (None, or ``(message, hinted)``) on every case; returns the message
    of the first failing case that carries a hint, else of the first failing case, else None."""
    failures = [f for f in map(check, cases) if f]
    hinted = [message for message, has_hint in failures if has_hint]
    return (hinted or [message for message, _ in failures] or [None])[0]


def edge_only(case, wrong_rows):
    """Whether the wrong positions are exactly some whose target is the first or last word of a
    slice, while positions with other targets are right (when the case has any)."""
    at_edge = np.array([t in case.edges for t in case.targets])
    return bool(wrong_rows.any() and at_edge[wrong_rows].all() and (~at_edge).any()
                and not wrong_rows[~at_edge].any())


EDGE_HINT = ("wrong only at positions whose target is the first or last word of a slice: check "
             "the bounds of this rank's columns, 0 <= t - vocab_start < V_r (= logits.shape[1])")
TARGET_HINT = ("the target's logit is wrong there: exactly one rank, the one whose slice holds t, "
               "contributes it, from its column t - vocab_start (0 <= t - vocab_start < V_r); "
               "every other rank adds 0")
OVERFLOW_HINT = ("inf or nan where the logits are large: exp overflowed. Subtract the largest "
                 "logit of all ranks (an Allreduce with MPI.MAX) before exp")
