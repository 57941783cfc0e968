"""Shared by the graded tests of lab 05_growing: drawn decays (milestones, factor, budget, start
ranks, rank cap), the reference schedules written here, and a reading of a list of phases as
what it produces at every point of the run: ranks, rate, and lr / ranks (SGD's noise scale at a
fixed batch per rank).

The answers are pure functions of their arguments, so one rank runs them. Both halves of a test
draw the cases from the grader's seed (the ``seed`` fixture, ``run.seed``): they change at every
check, and a failure names its case and seed.
"""
import bisect
import itertools

import numpy as np

TOL = 1e-9


def draw_cases(seed, count):
    """``count`` decays from the launch's ``seed``, each a dict of the answers' arguments
    (``max_ranks`` among them) and the seed."""
    rng = np.random.RandomState([seed, count])
    cases = []
    for k in range(count):
        factor = (3, 2, 4, 5)[k] if k < 4 else int(rng.randint(2, 6))
        epochs = float(rng.randint(4, 17)) / 2  # 2 to 8 epochs, in halves
        steps = int(rng.randint(1, 4))
        inside = rng.choice(np.arange(1, int(epochs * 2)), size=min(steps, int(epochs * 2) - 1),
                            replace=False) / 2
        milestones = sorted(inside.tolist())
        if k % 3 == 2:  # a milestone at or past the end, which makes no phase
            milestones.append(epochs + float(rng.randint(0, 3)))
        ranks = int(rng.randint(1, 4))
        reached = sum(m < epochs for m in milestones)
        if k % 2 == 1 and reached:  # a cap that stops the growth before the end (or at once)
            grown = ranks * factor ** int(rng.randint(0, reached))
            max_ranks = grown + int(rng.randint(0, factor - 1))  # short of the next whole factor
        else:
            max_ranks = None if k % 4 == 0 else ranks * factor ** (reached + int(rng.randint(0, 2)))
        cases.append({"lr": float(10 ** rng.uniform(-4, -1)), "milestones": milestones,
                      "factor": factor, "epochs": epochs, "ranks": ranks,
                      "max_ranks": max_ranks, "seed": seed})
    return cases


def arguments(case, names):
    """The answer's keyword arguments from ``case`` (a fresh list of milestones each call)."""
    return {k: list(case[k]) if k == "milestones" else case[k] for k in names}


def describe(case):
    args = ", ".join(f"{k}={case[k]!r}" for k in ("lr", "milestones", "factor", "epochs", "ranks",
                                                 "max_ranks") if k in case)
    return f"[case: {args}; seed {case['seed']}]"


def divisions(epoch, milestones):
    """How many milestones ``epoch`` has reached."""
    return bisect.bisect_right(sorted(milestones), epoch)


def decay_at(case, epoch):
    """(ranks, lr) of the step decay at ``epoch``."""
    return case["ranks"], case["lr"] / case["factor"] ** divisions(epoch, case["milestones"])


def growth_at(case, epoch):
    """(ranks, lr) of the growth at ``epoch``: each milestone reached multiplies the ranks by
    the factor while they fit within the cap, and divides the rate otherwise."""
    ranks, lr, cap = case["ranks"], case["lr"], case["max_ranks"]
    for _ in range(divisions(epoch, case["milestones"])):
        if cap is None or ranks * case["factor"] <= cap:
            ranks *= case["factor"]
        else:
            lr /= case["factor"]
    return ranks, lr


def observable(got):
    """An answer's phases in a form ``observe`` takes: ``Phase`` objects as triples."""
    if isinstance(got, (list, tuple)):
        return [[item.ranks, item.epochs, item.lr] if hasattr(item, "ranks") else item
                for item in got]
    return got


def read_phases(got):
    """``[(ranks, epochs, lr)]`` from what an answer returned (tuples, ``Phase`` objects or
    ``"R:E:LR"`` strings), or a sentence saying what is wrong with it."""
    if not isinstance(got, (list, tuple)) or not got:
        name = getattr(got, "type_name", type(got).__name__)
        return None, (f"returned {name} {got!r:.60}, not a non-empty list of (ranks, epochs, lr) "
                      f"phases")
    phases = []
    for item in got:
        if isinstance(item, str):
            item = item.split(":")
        elif hasattr(item, "ranks"):
            item = (item.ranks, item.epochs, item.lr)
        try:
            ranks, epochs, lr = item
            phases.append((int(ranks), float(epochs), float(lr)))
        except (TypeError, ValueError):
            return None, f"the phase {item!r:.60} is not a (ranks, epochs, lr) triple of numbers"
        if int(ranks) != float(ranks) or int(ranks) < 1:
            return None, (f"the phase {item!r:.60} has {ranks} ranks: a rank count is a whole "
                          f"number, 1 or more")
    return phases, None


def shape_problem(phases, case):
    """A sentence when the phases do not last a positive time or do not cover the budget."""
    lengths = [e for _, e, _ in phases]
    if any(e <= 0 for e in lengths):
        return (f"a phase lasts {min(lengths):g} epochs: every phase lasts a positive time, and "
                f"a milestone at or past the end of the run (epochs={case['epochs']:g}) never "
                f"happens, so it makes no phase")
    total = sum(lengths)
    if abs(total - case["epochs"]) > TOL:
        ends = [m for m in case["milestones"] if m < case["epochs"]] + [case["epochs"]]
        if len(lengths) == len(ends) and all(abs(e - end) < TOL for e, end in zip(lengths, ends)):
            return (f"the phases last {total:g} epochs in all, the run's budget is "
                    f"{case['epochs']:g}: each phase's epochs is how long the phase lasts (from "
                    f"the previous milestone to the next), not the epoch where it ends")
        return (f"the phases last {total:g} epochs in all, the run {case['epochs']:g}: the budget "
                f"of sentences is the run's epochs (each sentence once per epoch, whatever the "
                f"ranks), not its number of updates")
    return None


def timeline(phases):
    """``[(start, end, ranks, lr)]`` of consecutive phases from epoch 0."""
    out, start = [], 0.0
    for ranks, epochs, lr in phases:
        out.append((start, start + epochs, ranks, lr))
        start += epochs
    return out


def first_difference(phases, case, want_at):
    """The first sampled epoch where the phases give other (ranks, lr) than ``want_at(case, e)``:
    ``(epoch, got, want, phase index)``, or None. Samples every stretch between boundaries."""
    spans = timeline(phases)
    cuts = sorted({0.0, case["epochs"], *[s for s, _, _, _ in spans],
                   *[m for m in case["milestones"] if m < case["epochs"]]})
    for a, b in itertools.pairwise(cuts):
        epoch = (a + b) / 2
        k = next(i for i, (s, e, _, _) in enumerate(spans) if s <= epoch < e)
        got, want = (spans[k][2], spans[k][3]), want_at(case, epoch)
        if got[0] != want[0] or abs(got[1] - want[1]) > TOL * want[1]:
            return epoch, got, want, k
    return None
