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


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_sets_lr_before_every_update(submission):
    """SGD over 3 epochs of 8 updates, warm-up over 1.5 epochs to 4x the base rate."""
    ext = submission.warmup_extension(0.01, 4, 1.5)
    problem = check_extension(ext, "warmup_extension")
    assert problem is None, problem
    seen, _, _ = tiny_run(ext, chainer.optimizers.SGD(lr=123.0))
    got = [rate for _, rate, _ in seen]
    problem = first_difference(got, expected_rates(seen, 0.01, 4, 1.5), describe(seen, "lr"))
    if problem and all(abs(r - 123.0) < 1e-9 for r in got):
        problem = ("the optimizer's lr was never changed (still 123.0): set "
                   "trainer.updater.get_optimizer('main').lr in the extension")
    assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=40)
def test_sets_adam_alpha(submission):
    """With attr="alpha" the extension drives Adam's alpha (Adam has no lr to set)."""
    ext = submission.warmup_extension(1e-3, 2, 1.0, attr="alpha")
    problem = check_extension(ext, "warmup_extension")
    assert problem is None, problem
    try:
        seen, _, _ = tiny_run(ext, chainer.optimizers.Adam(alpha=5.0), epochs=2, attr="alpha")
    except AttributeError as err:
        if "lr" not in str(err):
            raise
        pytest.fail(f"setting Adam's lr failed ({err}): Adam has no lr to set; set the attribute "
                    f"named by `attr` (setattr(optimizer, attr, value))", pytrace=False)
    got = [rate for _, rate, _ in seen]
    problem = first_difference(got, expected_rates(seen, 1e-3, 2, 1.0), describe(seen, "alpha"))
    if problem and all(abs(r - 5.0) < 1e-9 for r in got):
        problem = ("Adam's alpha was never changed: set the attribute named by `attr` "
                   "(setattr(optimizer, attr, value)), not always `lr`")
    assert problem is None, problem
