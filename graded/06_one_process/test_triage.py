"""The exercise of lab 06_one_process: ``triage(single, ranks)``, the verdict on a failed run:
``"none"``, ``"ordinary"`` (the same error in one process and on every rank) or ``"ranks"``.

The observe half calls it on outcomes drawn from the seed (onelab.draw_cases: every kind, at 1
to 8 ranks); the check compares each verdict with the case's and names the case that differs.
"""
import pytest
from onelab import draw_cases

VERDICTS = ("none", "ordinary", "ranks")


@pytest.mark.points(4)
@pytest.mark.mpi(ranks=[1], timeout=30)
def test_verdicts_on_drawn_outcomes(submission, observe, seed):
    """Every kind of outcome, at 1 to 8 ranks: nothing failed, an ordinary bug, or the ranks."""
    observe(got=[submission.triage(single, list(ranks))
                 for single, ranks, _, _ in draw_cases(seed)])


def check_verdicts_on_drawn_outcomes(obs, run):
    for (single, ranks, want, why), got in zip(draw_cases(run.seed), obs["got"]):
        if got not in VERDICTS:
            name = getattr(got, "type_name", repr(got))
            return f"triage returned {name}: it must return one of {', '.join(map(repr, VERDICTS))}"
        if got != want:
            return (f"triage({single!r}, {ranks!r}) returned {got!r}, expected {want!r}: {why} "
                    f"[seed {run.seed}]")
    return None
