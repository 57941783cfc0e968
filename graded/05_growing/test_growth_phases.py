"""Exercise 2 of lab 05_growing: ``growth_phases(lr, milestones, factor, epochs, ranks,
max_ranks)``: the decay made by adding ranks. The observe half calls it on decays and caps drawn
from the seed; the check reads the phases at every point of the run: the budget, the ranks, the
rate, and lr / ranks against the decay's."""
import pytest
from growlab import (
    arguments,
    decay_at,
    describe,
    draw_cases,
    first_difference,
    growth_at,
    observable,
    read_phases,
    shape_problem,
)

ARGS = ("lr", "milestones", "factor", "epochs", "ranks", "max_ranks")


def problem(got, case):
    phases, why = read_phases(got)
    why = why or shape_problem(phases, case)
    if why:
        return why
    cap, factor = case["max_ranks"], case["factor"]
    over = [r for r, _, _ in phases if cap is not None and r > cap]
    if over:
        return f"a phase has {over[0]} ranks, more than max_ranks={cap}: no phase may pass the cap"
    difference = first_difference(phases, case, growth_at)
    if not difference:
        return None
    epoch, (ranks, lr), (want_ranks, want_lr), k = difference
    noise = decay_at(case, epoch)
    where = (f"at epoch {epoch:g} (phase {k}): {ranks} ranks at rate {lr:.4g}, expected "
             f"{want_ranks} at {want_lr:.4g} (lr / ranks {lr / ranks:.4g}, the decay's "
             f"{noise[1] / noise[0]:.4g})")
    previous = phases[k - 1][0] if k else case["ranks"]
    if epoch < min(case["milestones"]):
        return f"{where}: the first phase runs on ranks={case['ranks']} at lr itself"
    if ranks != want_ranks:
        if cap is not None and ranks == cap and ranks != previous * factor:
            return (f"{where}: grow by the whole factor or not at all; where ranks x factor "
                    f"would pass max_ranks, keep the ranks and divide the rate")
        if ranks == previous * 2 and factor != 2:
            return f"{where}: multiply the ranks by factor={factor}, not by 2"
        if ranks == previous and want_ranks > ranks:
            return (f"{where}: where the decay divides the rate, multiply the ranks by the factor "
                    f"instead and keep the rate")
        return f"{where}: the ranks multiply by factor={factor} at each milestone, up to max_ranks"
    if abs(want_lr - case["lr"]) <= 1e-12 * case["lr"]:
        return f"{where}: the rate is kept at lr while the ranks grow: growth replaces the decay"
    if abs(lr - want_lr * factor) < 1e-9 * lr and cap is not None:
        return (f"{where}: at the cap (max_ranks={cap}) the growth stops, and the rate must be "
                f"divided by the factor there instead, as the decay does")
    return f"{where}: lr / ranks must be the decay's at every point"


def uncapped(seed):
    return [{**case, "max_ranks": None} for case in draw_cases(seed, 12)]


def capped(seed):
    return [case for case in draw_cases(seed, 24) if case["max_ranks"] is not None]


def observe_growth(submission, observe, cases):
    observe(got=[observable(submission.growth_phases(**arguments(case, ARGS))) for case in cases])


def growth_problem(obs, cases):
    for case, got in zip(cases, obs["got"]):
        why = problem(got, case)
        if why:
            return f"{why} {describe(case)}"
    return None


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[1], timeout=30)
def test_ranks_grow_where_the_rate_would_decay(submission, observe, seed):
    """No cap: the run's epochs, the ranks times the factor at each milestone, the rate kept."""
    observe_growth(submission, observe, uncapped(seed))


def check_ranks_grow_where_the_rate_would_decay(obs, run):
    return growth_problem(obs, uncapped(run.seed))


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=30)
def test_past_the_cap_the_rate_decays_instead(submission, observe, seed):
    """With max_ranks drawn: whole factors up to the cap, then the rate divided; lr / ranks
    is the decay's at every point."""
    observe_growth(submission, observe, capped(seed))


def check_past_the_cap_the_rate_decays_instead(obs, run):
    return growth_problem(obs, capped(run.seed))
