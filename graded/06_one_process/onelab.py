"""Shared by both halves of lab 06_one_process's graded test: job outcomes drawn from the
grader's seed, each with its verdict and the sentence that explains it.

An outcome is ``(single, ranks)``: one process's error message or None, and each rank's. The
kinds below are the ones lesson 6 tells apart; each draws its rank count (1 to 8), which ranks
fail, and the messages. Nothing here runs learner code or MPI: the answer is a pure function.
"""
import numpy as np

ERRORS = ["KeyError: 'lr'", "IndexError: list index out of range",
          "ValueError: the shard of rank 3 is empty", "RuntimeError: CUDA error: out of memory",
          "FileNotFoundError: result/model.npz", "TypeError: unsupported operand type(s)"]


def _kinds(rng, size):
    """``{kind: (single, ranks, verdict, why)}`` at ``size`` ranks (the kinds that fit it)."""
    a, b = rng.choice(ERRORS, size=2, replace=False).tolist()
    every = [a] * size
    kinds = {
        "none": (None, [None] * size, "none", "nothing failed, in one process or on any rank"),
        "ordinary": (a, every, "ordinary",
                     (f"one process and every one of the {size} ranks report the same error: an "
                     f"ordinary bug, to debug in one process")),
        "ranks_only": (None, every, "ranks",
                       ("one process ran without an error while the ranks failed: it depends on "
                       "the ranks, one process will not show it")),
        "other_error": (b, every, "ranks",
                        ("one process failed with another error than the ranks: not the same "
                        "error, so it depends on the ranks")),
        "single_only": (a, [None] * size, "ranks",
                        ("one process fails, but no rank reports an error: 'ordinary' needs the "
                        "same error on every rank")),
    }
    if size >= 2:
        failing = np.sort(rng.choice(size, size=int(rng.randint(1, size)), replace=False))
        if size >= 3:  # the first and the last fail, a rank in between does not
            failing = np.array([0, *sorted(set(failing.tolist()) - {0, size - 1})[:size - 3],
                                size - 1])
        some = [a if r in failing else None for r in range(size)]
        kinds["some_ranks"] = (rng.choice([None, a]), some, "ranks",
                               (f"only {len(failing)} of {size} ranks report an error, the others "
                               f"end without one: it depends on the rank ('ordinary' needs the "
                               f"same error on every rank)"))
        mixed = list(every)
        mixed[int(rng.randint(1, size - 1)) if size > 2 else 1] = b
        kinds["mixed"] = (a, mixed, "ranks",
                          ("the ranks report different errors: 'ordinary' needs the same error "
                          "on every rank as in one process"))
    return kinds


def draw_cases(seed):
    """Every kind at 1 rank and at drawn counts from 2 to 8: ``[(single, ranks, verdict, why)]``."""
    rng = np.random.RandomState([seed, 6])
    cases = []
    for size in [1, 2, 3, *rng.randint(4, 9, size=3).tolist()]:
        kinds = _kinds(rng, size)
        cases += [kinds[name] for name in sorted(kinds)]
    order = rng.permutation(len(cases))
    return [cases[i] for i in order]
