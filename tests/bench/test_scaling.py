"""``dlhack bench scaling`` (dlhack.bench.scaling): each point is a training command, and the
one-process ceiling trains a shard through the bench module."""
import argparse

from dlhack.bench import training
from dlhack.bench.scaling import train_command


def test_bench_scaling_runs_the_ceiling_through_the_bench_module(tmp_path):
    args = argparse.Namespace(iterations=4, epochs=1, batchsize=16, units=16, layers=1,
                              gc_every=50, corpus=None, threads=1, impl="fused", balance=True)
    cmd, _ = train_command(1, args, tmp_path, shard="0/2")
    at = cmd.index("-m")
    assert cmd[at + 1] == "dlhack.bench.training" and cmd[-2:] == ["--shard", "0/2"]
    cmd, _ = train_command(2, args, tmp_path)
    assert cmd[cmd.index("-m") + 1] == "dlhack.train" and "--shard" not in cmd
    parsed = training.build_bench_parser().parse_args(cmd[cmd.index("-m") + 2:])
    assert parsed.profile and parsed.impl == "fused" and parsed.balance
