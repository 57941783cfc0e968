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


def mistake(seen, got, base_lr, scale, warmup, start):
    """The plausible wrong schedule that explains every update's rate, or ""."""
    def rate(epoch, base=base_lr):
        return base * (1 + (scale - 1) * min(epoch / warmup, 1))
    epochs = [epoch for epoch, _, _ in seen]
    rules = [
        ([rate(e) for e in [0.0] + epochs[:-1]],
         ("each update used the rate of the update before: set it from epoch_detail after the "
         "update (the epoch the next update starts at), not previous_epoch_detail")),
        ([rate(int(e)) for e in epochs],
         "the rate changes once an epoch (updater.epoch); use the fraction, epoch_detail"),
        ([rate(e, start) for e in epochs],
         f"that warms up from the optimizer's own starting rate ({start}); use base_lr"),
    ]
    for want, why in rules:
        if all(abs(g - w) <= 1e-6 * abs(w) for g, w in zip(got, want)):
            return ": " + why
    right = [rate(e) for e in epochs]
    late = [i for i, e in enumerate(epochs) if e >= warmup]
    if late and all(abs(got[i] - right[i]) > 1e-9 for i in late) and all(
            abs(got[i] - right[i]) <= 1e-9 for i in range(late[0])):
        return (": after the warm-up the rate must still be set (to base_lr * scale) at every "
                "iteration")
    return ""


def check_run(obs, base_lr, scale, warmup, attr, start):
    if obs["problem"]:
        return obs["problem"]
    seen = obs["seen"]
    got = [rate for _, rate, _ in seen]
    problem = first_difference(got, expected_rates(seen, base_lr, scale, warmup), describe(seen, attr))
    if problem:
        problem += mistake(seen, got, base_lr, scale, warmup, start)
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
