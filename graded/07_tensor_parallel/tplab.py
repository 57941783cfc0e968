"""Shared by both halves of lab 07_tensor_parallel's graded tests: the drawn cases (vocabulary,
uneven slices, batch, logits), the one-process references, what an answer's traffic may be, and
hints for the commonest wrong answers.

Each launch draws its cases from the grader's seed (the ``seed`` fixture, ``run.seed`` in the
check): the ranks make the same logits from it and hand the answer only their slice; the check
makes them again. A failure names the case and the seed. No MPI here: the check imports it too.
"""
import numpy as np
from labtools import block_imports

block_imports(("dlhack.parallel.tensor_parallel",),
              "{name} holds the course's own vocabulary-parallel cross-entropy, which this lab "
              "asks you to write: it cannot be imported here")

COUNT = 6  # cases per test


class Case:
    """One drawn case: ``n`` positions, ``v`` words cut into ``size`` uneven slices, logits
    (n, v) float64, targets (n,) that include the first and last word of slices.

    ``group`` draws other logits of the same shapes (two tensor-parallel groups side by side)."""

    def __init__(self, seed, size, n, v, offset, group=0):
        rng = np.random.RandomState(seed)
        self.seed, self.size, self.n, self.v, self.offset = seed, size, n, v, offset
        inner = np.sort(rng.choice(np.arange(1, v), size=size - 1, replace=False))
        self.cuts = [0, *inner.tolist(), v]
        data = np.random.RandomState([seed, group])
        self.logits = data.normal(scale=3.0, size=(n, v))
        # Large logits on some rows: exp overflows unless the maximum is subtracted first.
        self.logits += offset * data.randint(0, 2, size=(n, 1))
        edges = sorted({c for c in self.cuts[:-1]} | {c - 1 for c in self.cuts[1:]})
        self.targets = data.randint(0, v, size=n)
        picks = data.permutation(edges)[:n]
        self.targets[data.permutation(n)[:len(picks)]] = picks
        self.edges = set(edges)

    def slice_of(self, rank):
        return self.cuts[rank], self.cuts[rank + 1]

    def describe(self):
        slices = ", ".join(f"{a}..{b - 1}" for a, b in zip(self.cuts[:-1], self.cuts[1:]))
        big = f", {self.offset:g} added to some rows" if self.offset else ""
        return (f"[case: N={self.n} positions, V={self.v} words in slices {slices}{big}; "
                f"targets {self.targets.tolist()}; seed {self.seed}]")


def draw_cases(seed, size, group=0, count=COUNT):
    """``count`` cases for ``size`` ranks from the launch's ``seed``: one with a slice per word,
    one with a single position, two with large logits, the rest drawn."""
    rng = np.random.RandomState([seed, size])
    cases = []
    for k in range(count):
        v = size if k == 0 else int(rng.randint(size, size + 40))
        n = 1 if k == 1 else int(rng.randint(2 * size, 2 * size + 10))
        offset = 1000.0 if k in (2, count - 1) else 0.0
        cases.append(Case(int(rng.randint(2 ** 31)), size, n, v, offset, group))
    return cases


def observable(got):
    """What an answer returned, in a form ``observe`` takes (a Chainer variable's array)."""
    return got.array if hasattr(got, "array") and hasattr(got, "grad") else got


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
    try:
        got = np.asarray(got, dtype=np.float64)
    except (TypeError, ValueError):
        name = getattr(got, "type_name", type(got).__name__)
        return None, f"{what} returned a {name}, not an array of numbers"
    if got.shape != shape:
        return None, f"{what} returned shape {got.shape}, expected {shape}"
    return got, None


def traffic_problem(traffic, positions, most_per_case):
    """None when this rank's MPI calls in the test (the grader's shim, ``run.traffic``) are
    buffer allreduces only, at most ``most_per_case`` per case and ``most_per_case`` numbers
    per position in all; else a sentence saying what was sent instead."""
    other = [c for c in traffic.collectives
             if not c.kind.startswith(("Allreduce", "Iallreduce", "Barrier", "Ibarrier"))]
    if traffic.sends or other or traffic.one_sided:
        what = (f"MPI_{other[0].kind} of {other[0].count} numbers" if other else
                f"{len(traffic.sends)} point-to-point messages" if traffic.sends else
                "one-sided calls")
        return (f"it made {what}: use only comm.Allreduce on numpy arrays, a few numbers per "
                f"position; gathering or sending the logits themselves moves N x V_r numbers, "
                f"which is what splitting the layer avoids (the lower-case comm.allreduce "
                f"pickles and sends its objects through other messages)")
    calls = [c for c in traffic.collectives if c.kind.startswith(("Allreduce", "Iallreduce"))]
    cases = len(positions)
    total, n = sum(c.count for c in calls), sum(positions)
    if len(calls) > most_per_case * cases:
        return (f"{len(calls)} allreduces for {cases} calls of N={positions} positions: send each "
                f"quantity for all N positions in one message (an array of N numbers), at most "
                f"{most_per_case} allreduces per call")
    if total > most_per_case * n:
        return (f"{total} numbers allreduced for {n} positions in all, more than "
                f"{most_per_case} per position: only the maximum, the sum of exponentials and "
                f"the target's logit need to travel, N numbers each, never the logits")
    return None


def close(got, want):
    return np.isclose(got, want, rtol=1e-7, atol=1e-8)


def first_failure(cases, check):
    """Runs ``check(case, k)`` (None, or ``(message, hinted)``) on every case; returns the
    message of the first failing case that carries a hint, else of the first failing case."""
    failures = [f for f in (check(case, k) for k, case in enumerate(cases)) if f]
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
GROUPS_HINT = (" (two groups of ranks work side by side here, each on its own batch, as when "
               "tensor and data parallelism combine: every message must go through the comm "
               "the function is given, never MPI.COMM_WORLD)")


def groups(rank, size):
    """``(group, rank in group, group size)`` of the side-by-side test: ranks dealt round-robin
    into two groups (0, 2 | 1, 3)."""
    return rank % 2, rank // 2, size // 2
