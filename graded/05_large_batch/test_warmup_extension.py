"""Exercise 2 of lab 05: ``warmup_extension(base_lr, scale, warmup_epochs, attr)``, a Chainer
extension that sets the optimizer's rate from ``warmup_lr`` before every update."""
import chainer
import pytest
from schedule_runs import check_extension, first_difference, tiny_run


def expected_rates(seen, base_lr, scale, warmup):
    return [base_lr * (1 + (scale - 1) * min(epoch / warmup, 1)) for epoch, _, _ in seen]


def describe(seen, attr):
    def sentence(i, got, want):
        text = (f"update {i + 1} (at epoch {seen[i][0]:.3g}) used {attr} = {got:.6g}, expected "
                f"{want:.6g}")
        if i == 0:
            text += (": the first update must already use the schedule's rate; set it in the "
                     "extension's initializer (make_extension(..., initializer=...)) too")
        return text
    return sentence


def observe_run(observe, ext, optimizer, attr, **kwargs):
    """Hand the grader what the extension did: per update (epoch, rate, batch size)."""
    problem = check_extension(ext, "warmup_extension")
    if problem:
        observe(problem=problem, seen=[])
        return
    seen, _, _ = tiny_run(ext, optimizer, attr=attr, **kwargs)
    observe(problem=None, seen=[[float(e), float(r), int(b)] for e, r, b in seen])


def check_run(obs, base_lr, scale, warmup, attr, start):
    if obs["problem"]:
        return obs["problem"]
    seen = obs["seen"]
    got = [rate for _, rate, _ in seen]
    problem = first_difference(got, expected_rates(seen, base_lr, scale, warmup), describe(seen, attr))
    if problem and all(abs(r - start) < 1e-9 for r in got):
        problem = (f"the optimizer's {attr} was never changed (still {start}): set the attribute "
                   f"named by `attr` of trainer.updater.get_optimizer('main') in the extension "
                   f"(setattr(optimizer, attr, value)), not always `lr`")
    return problem


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_sets_lr_before_every_update(submission, observe):
    """SGD over 3 epochs of 8 updates, warm-up over 1.5 epochs to 4x the base rate."""
    observe_run(observe, submission.warmup_extension(0.01, 4, 1.5), chainer.optimizers.SGD(lr=123.0),
                "lr")


def check_sets_lr_before_every_update(obs, run):
    return check_run(obs, 0.01, 4, 1.5, "lr", 123.0)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_sets_adam_alpha(submission, observe):
    """With attr="alpha" the extension drives Adam's alpha (Adam has no lr to set)."""
    ext = submission.warmup_extension(1e-3, 2, 1.0, attr="alpha")
    try:
        observe_run(observe, ext, chainer.optimizers.Adam(alpha=5.0), "alpha", epochs=2)
    except AttributeError as err:
        if "lr" not in str(err):
            raise
        observe(problem=f"setting Adam's lr failed ({err}): Adam has no lr to set; set the "
                        f"attribute named by `attr` (setattr(optimizer, attr, value))", seen=[])


def check_sets_adam_alpha(obs, run):
    return check_run(obs, 1e-3, 2, 1.0, "alpha", 5.0)
