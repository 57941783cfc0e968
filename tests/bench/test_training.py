"""``python -m dlhack.bench.training``: ``dlhack train`` with the benchmarks' own knobs, the
shard one process trains alone on (bench scaling's ceiling) and the time budget (bench corpus)."""
import argparse
import json

import numpy as np
import pytest

from dlhack.bench import training
from dlhack.parallel.scatter import scatter_index
from dlhack.train import TrainConfig, build_parser, make_communicator

TINY = ["--n-train", "200", "--units", "16", "--layers", "1", "--batchsize", "16",
        "--eval-every", "0", "--n-eval", "4", "--no-progress"]


class RankOf:
    """Enough of a communicator for ``scatter_index``: a rank, a size, no messages."""

    def __init__(self, rank, size):
        self.rank, self.size = rank, size


def test_the_bench_parser_is_trains_with_two_flags_more():
    train_flags = {o for a in build_parser()._actions for o in a.option_strings}
    bench_flags = {o for a in training.build_bench_parser()._actions for o in a.option_strings}
    assert bench_flags - train_flags == {"--shard", "--minutes"}
    assert train_flags <= bench_flags


def test_a_shard_is_what_rank_r_of_k_gets_in_the_same_order(monkeypatch):
    """``--shard R/K``: one process gets exactly the samples rank R of a K-rank job gets, in
    the same order, so it runs the same batches and steps."""
    data = [(np.array([i]), np.array([i])) for i in range(11)]
    config = TrainConfig(seed=5)
    one = make_communicator("none")

    def load_data(config, comm):  # as dlhack.train's does on one rank: every sample, dealt
        order = scatter_index(len(data), comm, shuffle=True, seed=config.seed, equal_length=True)
        return "vocabs", [data[i] for i in order], "dev", "test"

    monkeypatch.setattr(training, "load_data", load_data)
    for rank in range(3):
        want = scatter_index(11, RankOf(rank, 3), shuffle=True, seed=5, equal_length=True)
        vocabs, got, dev, test = training.load_shard(config, one, f"{rank}/3")
        assert [int(x[0][0]) for x in got] == list(want)
        assert (vocabs, dev, test) == ("vocabs", "dev", "test")
    with pytest.raises(ValueError, match="one process only"):
        training.load_shard(config, one, "3/3")
    with pytest.raises(ValueError, match="one process only"):
        training.load_shard(config, RankOf(0, 2), "0/2")


def test_shard_trains_alone_on_one_ranks_steps(tmp_path):
    out = tmp_path / "run"
    argv = TINY + ["--epochs", "1", "--communicator", "none", "--shard", "1/2", "--out", str(out)]
    assert training.main(argv) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["iterations"] == 7  # ceil(ceil(200 / 2) / 16) steps, not 13
    assert "shard" not in metrics["config"]


def test_a_balanced_shard_trains_one_ranks_share_of_every_global_batch(tmp_path):
    """``--shard R/K --balance``: one process plans every global batch of K x b sentences and
    trains rank R's share of each: the steps of a K-rank epoch, on about 1/K of the tokens."""
    out = tmp_path / "run"
    argv = TINY + ["--epochs", "1", "--communicator", "none", "--shard", "1/2", "--balance",
                   "--out", str(out)]
    assert training.main(argv) == 0
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["iterations"] == 7  # 200 sentences in global batches of 32, not 13 steps


class Clock:
    """``time.perf_counter`` that moves only when told to."""

    def __init__(self):
        self.now = 100.0

    def __call__(self):
        return self.now


class Stub:
    """Enough of a trainer for a stop trigger: an updater with an iteration and an epoch."""

    def __init__(self):
        self.updater = argparse.Namespace(iteration=0, epoch=0, epoch_detail=0.0,
                                          is_new_epoch=False)


class Comm:
    """A communicator of one rank that counts its broadcasts."""

    def __init__(self):
        self.bcasts = 0

    def bcast_obj(self, obj, root=0):
        self.bcasts += 1
        return obj


def test_time_limit_stops_every_ten_steps_once_the_minutes_are_spent(monkeypatch):
    clock, comm, trainer = Clock(), Comm(), Stub()
    monkeypatch.setattr(training.time, "perf_counter", clock)
    stop = training.TimeLimit((50, "iteration"), 0.5, comm)
    assert stop.get_training_length() == (50, "iteration")
    clock.now += 1000  # before training starts: the clock has not started yet
    assert not stop(trainer) and comm.bcasts == 1  # iteration 0 asks rank 0's clock
    clock.now += 31  # past the budget of 30 s
    for trainer.updater.iteration in range(1, 10):
        assert not stop(trainer)  # between checks: no message, no stop
    assert comm.bcasts == 1
    trainer.updater.iteration = 10
    assert stop(trainer) and comm.bcasts == 2


def test_time_limit_keeps_the_usual_limit(monkeypatch):
    monkeypatch.setattr(training.time, "perf_counter", Clock())
    stop, trainer = training.TimeLimit((20, "iteration"), 5, Comm()), Stub()
    assert not stop(trainer)
    trainer.updater.iteration = 20
    assert stop(trainer)


def test_minutes_stop_a_long_run_at_a_check(tmp_path):
    """A budget of 6 ms: ten steps take longer, so the check at step 10 stops 100 epochs."""
    out = tmp_path / "run"
    assert training.main(TINY + ["--epochs", "100", "--minutes", "0.0001", "--out", str(out)]) == 0
    assert json.loads((out / "metrics.json").read_text())["iterations"] == 10
