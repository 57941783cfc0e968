"""``dlhack bench scaling`` (dlhack.bench.scaling): each point is a training command, the
one-process ceiling trains a shard through the bench module, and a variant with another
communicator runs beside the plain one."""
import argparse
from pathlib import Path

import pytest

from dlhack.bench import training
from dlhack.bench.scaling import parse_args, plan_of, train_command


def test_bench_scaling_runs_the_ceiling_through_the_bench_module(tmp_path):
    args = argparse.Namespace(iterations=4, epochs=1, batchsize=16, units=16, layers=1,
                              gc_every=50, corpus=None, threads=1, impl="fused", balance=True,
                              communicator="auto")
    cmd, _ = train_command(1, args, tmp_path, shard="0/2")
    at = cmd.index("-m")
    assert cmd[at + 1] == "dlhack.bench.training" and cmd[-2:] == ["--shard", "0/2"]
    cmd, _ = train_command(2, args, tmp_path)
    assert cmd[cmd.index("-m") + 1] == "dlhack.train" and "--shard" not in cmd
    parsed = training.build_bench_parser().parse_args(cmd[cmd.index("-m") + 2:])
    assert parsed.profile and parsed.impl == "fused" and parsed.balance
    assert parsed.communicator == "auto"


def test_compare_communicator_adds_a_run_with_that_communicator():
    args = parse_args(["--compare-communicator", "ring", "--iterations", "4"])
    tables = ({1: [], 2: []}, {}, {}, {2: []}, {}, {}, {2: []})
    plan = plan_of(2, args, tables, Path("out"))
    assert [name for name, _, _ in plan] == ["plain", "--communicator ring",
                                             "2 alone side by side"]
    (_, table, run), = [p for p in plan if p[0] == "--communicator ring"]
    assert table is tables[3]
    cmd, _ = train_command(2, run.args[1], run.args[2])
    assert cmd[cmd.index("--communicator") + 1] == "ring"
    plain, _ = train_command(2, args, Path("out"))
    assert plain[plain.index("--communicator") + 1] == "auto"
    assert [name for name, _, _ in plan_of(1, args, tables, Path("out"))] == ["plain"]


@pytest.mark.parametrize("flag, name, index, train_flag, field, value", [
    ("--compare-update", "whole update", 4, "--no-shard-update", "shard_update", False),
    ("--compare-memory", "memory given back", 5, "--no-keep-memory", "keep_memory", False),
    ("--compare-speed", "speed shares", 6, "--balance-speed", "balance_speed", True),
])
def test_a_compare_flag_adds_a_run_with_one_train_switch_turned(flag, name, index, train_flag,
                                                                field, value):
    args = parse_args(["--impl", "fused", "--balance", flag, "--iterations", "4"])
    tables = tuple({1: [], 2: []} if i == 0 else {2: []} if i in (index, 7) else {}
                   for i in range(8))
    plan = plan_of(2, args, tables, Path("out"))
    assert [step for step, _, _ in plan] == ["plain", name, "2 alone side by side"]
    (_, table, run), = [p for p in plan if p[0] == name]
    assert table is tables[index]
    cmd, _ = train_command(2, run.args[1], run.args[2])
    assert train_flag in cmd
    for plain in (train_command(2, args, Path("out"))[0],
                  train_command(1, args, Path("out"), shard="0/2")[0]):  # nor the ceiling
        assert train_flag not in plain
    flags = training.build_bench_parser().parse_args(cmd[cmd.index("-m") + 2:])
    assert getattr(flags, field) is value


def test_floor_runs_in_every_repeat_for_steps_as_long_as_the_k_rank_runs(monkeypatch, tmp_path):
    """--floor: after each repeat's runs at k > 1 ranks, the machine's floor for a step as long
    as that repeat's k-rank step (its profile's phases added up); never for one rank."""
    from dlhack.bench import scaling
    from dlhack.step_profile import PHASES

    def metrics(step_ms):
        ms = {phase: step_ms / len(PHASES) for phase in PHASES}
        return {"sentences_per_sec": 100.0, "iterations": 4, "profile": {"ranks": [{"ms": ms}]}}

    steps = iter([30.0, 45.0])  # the 2-rank step of repeat 1, then of repeat 2
    monkeypatch.setattr(scaling, "run_point", lambda k, *a, **kw: metrics(
        20.0 if k == 1 else next(steps)))
    monkeypatch.setattr(scaling, "run_alone", lambda k, *a: metrics(25.0))
    calls = []
    monkeypatch.setattr(scaling.sync_floor, "run", lambda k, step, out, threads: calls.append(
        (k, step, threads)) or {"of_alone": 0.9 + len(calls) / 100})
    args = parse_args(["--floor", "--iterations", "4", "--repeats", "2", "--threads", "2"])
    floors = scaling.run_repeats(args, tmp_path)[-1]
    assert [(k, threads) for k, _, threads in calls] == [(2, 2), (2, 2)]
    assert [step for _, step, _ in calls] == [pytest.approx(30.0), pytest.approx(45.0)]
    assert floors == {2: [{"of_alone": 0.91}, {"of_alone": 0.92}]}
    steps = iter([30.0, 45.0])
    assert scaling.run_repeats(parse_args(["--iterations", "4", "--repeats", "2"]),
                               tmp_path)[-1] == {}
    assert len(calls) == 2
