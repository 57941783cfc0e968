"""Exercise 1 of lab 05_growing: ``decay_phases(lr, milestones, factor, epochs, ranks)``, a step
decay as ``dlhack grow`` phases, read at every point of the run on drawn decays."""
import pytest
from growlab import decay_at, describe, draw_cases, first_difference, read_phases, shape_problem


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
def test_phases_give_the_decays_rate_at_every_epoch(submission):
    """The phases last the run's epochs, on the given ranks, at the decay's rate throughout."""
    for case in draw_cases(12):
        args = {k: case[k] for k in ("lr", "milestones", "factor", "epochs", "ranks")}
        why = problem(submission.decay_phases(**{**args, "milestones": list(case["milestones"])}),
                      case)
        if why:
            pytest.fail(f"{why} {describe({**args, 'seed': case['seed']})}", pytrace=False)
