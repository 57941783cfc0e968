"""Exercise 1 of lab 05: ``warmup_lr(epoch, base_lr, scale, warmup_epochs)``, Goyal et al.'s
linear scaling rule with gradual warm-up, as a number."""
import numpy as np
import pytest
from labtools import drawn

CASES = [  # (epoch, base_lr, scale, warmup_epochs) -> expected
    ((0.0, 0.1, 8, 2), 0.1),
    ((0.5, 0.1, 8, 2), 0.275),
    ((1.0, 0.1, 8, 2), 0.45),
    ((2.0, 0.1, 8, 2), 0.8),
    ((7.25, 0.1, 8, 2), 0.8),
    ((0.3, 0.02, 1, 5), 0.02),
    ((0.0, 0.05, 4, 0), 0.2),
    ((3.0, 0.05, 4, 0), 0.2),
]


def reference(epoch, base_lr, scale, warmup):
    if warmup <= 0 or epoch >= warmup:
        return base_lr * scale
    return base_lr * (1 + (scale - 1) * epoch / warmup)


def drawn_cases(seed, n=300):
    """``n`` cases: k from 1 to 64, base rates over four decades, warm-ups of 0 or 0.1 to 10
    epochs, epochs anywhere on the ramp and past it (not only at round fractions)."""
    rng = np.random.RandomState(seed)
    for _ in range(n):
        warmup = 0 if rng.uniform() < 0.1 else float(rng.uniform(0.1, 10))
        args = (float(rng.uniform(0, 1.5 * warmup + 1)), float(10 ** rng.uniform(-4, 0)),
                int(rng.randint(1, 65)), warmup)
        yield args, reference(*args)


def hint(args, got):
    epoch, base_lr, scale, warmup = args
    ramp = warmup and 0 < epoch < warmup and scale != 1
    rounded = ramp and any(np.isclose(got, reference(round(epoch, d), base_lr, scale, warmup),
                                      rtol=1e-9) for d in (1, 2, 3))
    if rounded and not np.isclose(got, reference(int(epoch), base_lr, scale, warmup), rtol=1e-9):
        return (": that is the rate at the epoch rounded; use the fraction as it is (the rate "
                    "changes at every update)")
    if ramp and np.isclose(got, base_lr + (scale - 1) * epoch / warmup, rtol=1e-9):
        return (": the increase must scale with base_lr too: base_lr * (1 + (scale - 1) * "
                "epoch / warmup_epochs)")
    if ramp and np.isclose(got, base_lr * scale ** (epoch / warmup), rtol=1e-9):
        return (": that rises geometrically (scale ** fraction); the warm-up is linear: "
                "base_lr * (1 + (scale - 1) * epoch / warmup_epochs)")
    if ramp and scale != 2 and np.isclose(got, base_lr * (1 + epoch / warmup), rtol=1e-9):
        return (": that ramp is right only for k = 2; the rate climbs by (scale - 1) * base_lr "
                "over the warm-up")
    if warmup and epoch < warmup and np.isclose(got, base_lr * scale):
        return ": during the warm-up the rate rises from base_lr, it is not base_lr * scale yet"
    if epoch >= warmup and np.isclose(got, base_lr):
        return ": after the warm-up the rate is base_lr * scale"
    if warmup and epoch >= warmup and got > base_lr * scale:
        return (": after the warm-up the rate stays at base_lr * scale; the ramp stops at "
                "warmup_epochs")
    if warmup and epoch < warmup and got < base_lr:
        return (": during the warm-up the rate rises from base_lr (at epoch 0) to base_lr * scale; "
                "it does not start from 0")
    if warmup and np.isclose(got, base_lr * (1 + (scale - 1) * min(int(epoch) / warmup, 1))):
        return (": epoch is a fraction (2.5 is the middle of the third epoch); use it as it is, "
                "not the whole epochs done")
    if warmup == 0:
        return ": warmup_epochs = 0 means no warm-up (and no division by zero)"
    return ""


def number(value):
    """A learner's return value as the grader can receive it (numpy scalars as floats)."""
    if isinstance(value, (np.floating, np.integer)):
        return float(value)
    return value if value is None or isinstance(value, (int, float)) else repr(value)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=30)
def test_values(submission, observe, seed):
    """The rate at chosen epochs (the start, mid-ramp, the end of the ramp, after it, k = 1),
    then at 300 drawn cases: any k, base rate, warm-up length and fractional epoch."""
    got = []
    for args, _ in [*CASES, *drawn_cases(seed)]:
        try:
            got.append(number(submission.warmup_lr(*args)))
        except ZeroDivisionError:
            got.append("ZeroDivisionError")
            break
    observe(got=got)


def check_values(obs, run):
    for i, ((args, want), got) in enumerate(zip([*CASES, *drawn_cases(run.seed)], obs["got"])):
        where = drawn(run.seed) if i >= len(CASES) else ""
        if got == "ZeroDivisionError":
            return (f"warmup_lr{args} divided by zero: with warmup_epochs = 0 there is no "
                    f"warm-up, the rate is base_lr * scale at once{where}")
        if got is None:
            return "warmup_lr returned None: did it forget to `return`?"
        if not isinstance(got, (int, float)):
            return f"warmup_lr{args} returned {got}, not a number"
        if not np.isclose(float(got), want, rtol=1e-9):
            return (f"warmup_lr(epoch={args[0]}, base_lr={args[1]}, scale={args[2]}, "
                    f"warmup_epochs={args[3]}) returned {float(got):.6g}, expected {want:.6g}"
                    + hint(args, float(got)) + where)
    return None
