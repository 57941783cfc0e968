"""Exercise 1 of lab 05_growing: ``decay_phases(lr, milestones, factor, epochs, ranks)``, a step
decay as ``dlhack grow`` phases. The observe half calls it on decays drawn from the seed; the
check reads the phases at every point of the run: budget, ranks, rate."""
import pytest
from growlab import (
    arguments,
    decay_at,
    describe,
    draw_cases,
    first_difference,
    observable,
    read_phases,
    shape_problem,
)

COUNT = 12
ARGS = ("lr", "milestones", "factor", "epochs", "ranks")


def problem(got, case):
    phases, why = read_phases(got)
    why = why or shape_problem(phases, case)
    if why:
        return why
    difference = first_difference(phases, case, decay_at)
    if not difference:
        return None
    epoch, (ranks, lr), (want_ranks, want_lr), k = difference
    if ranks != want_ranks:
        return (f"phase {k} runs on {ranks} ranks: every phase of the decay runs on the "
                f"ranks={want_ranks} it is given")
    if k == 0 and epoch < min(case["milestones"]):
        return (f"the first phase runs at {lr:.4g}, not at lr={case['lr']:.4g}: the rate is "
                f"divided only once a milestone is reached")
    return (f"at epoch {epoch:g} (phase {k}) the rate is {lr:.4g}, the decay's {want_lr:.4g}: "
            f"divide lr by factor={case['factor']} once for each milestone reached")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=30)
def test_phases_give_the_decays_rate_at_every_epoch(submission, observe, seed):
    """The phases last the run's epochs, on the given ranks, at the decay's rate throughout."""
    observe(got=[observable(submission.decay_phases(**arguments(case, ARGS)))
                 for case in draw_cases(seed, COUNT)])


def check_phases_give_the_decays_rate_at_every_epoch(obs, run):
    for case, got in zip(draw_cases(run.seed, COUNT), obs["got"]):
        why = problem(got, case)
        if why:
            return f"{why} {describe({**{k: case[k] for k in ARGS}, 'seed': case['seed']})}"
    return None
