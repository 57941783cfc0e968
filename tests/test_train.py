"""Training end to end at a tiny size: one process (a job of one rank), the CLI, and 2 ranks
under mpiexec; one process against a serial reference in plain Chainer."""
import json
import os
import subprocess
import sys

import chainer
import numpy as np
import pytest

from dlhack import cli
from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.train import TrainConfig, train

TINY = ["--n-train", "300", "--units", "16", "--layers", "1", "--batchsize", "16",
        "--n-eval", "20", "--no-progress"]


def test_train_writes_metrics_plot_and_model(tmp_path, capsys):
    config = TrainConfig(n_train=300, units=16, layers=1, batchsize=16, epochs=2, n_eval=20,
                         out=str(tmp_path), progress=False)
    metrics = train(config)
    for key in ("bleu", "sentences_per_sec", "ranks", "epochs", "seconds"):
        assert key in metrics
    assert metrics["ranks"] == 1 and metrics["epochs"] == pytest.approx(2)
    assert 0 <= metrics["bleu"] <= 100 and metrics["sentences_per_sec"] > 0
    saved = json.loads((tmp_path / "metrics.json").read_text())
    assert saved["bleu"] == metrics["bleu"] and len(saved["log"]) == 2
    assert saved["log"][1]["main/loss"] < saved["log"][0]["main/loss"]
    assert (tmp_path / "training.png").stat().st_size > 1000
    out = capsys.readouterr().out
    assert "test BLEU" in out and "sentences/s" in out

    # the saved model translates from the command line: one line per sentence (a barely
    # trained model may well answer with an empty sentence)
    assert cli.main(["translate", "--model", str(tmp_path), "the dog ate an apple .",
                     "where is the station ?"]) == 0
    assert capsys.readouterr().out.count("\n") == 2


def serial_reference(config):
    """``config.iterations`` steps of plain Chainer (Adam, StandardUpdater, no communicator):
    the parameters one process of ``dlhack train`` must reach from the same seed and batches."""
    np.random.seed(config.seed)  # as train() does, before the corpus and the model
    corpus = default_corpus(seed=config.seed, n_train=config.n_train)
    # A shard of a one-rank job is every sentence, dealt in the order the seed draws.
    order = np.random.RandomState(config.seed).permutation(len(corpus.train))
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=config.units,
                    n_layers=config.layers, dropout=config.dropout,
                    attention=config.attention, impl=config.impl)
    initial = {name: p.array.copy() for name, p in model.namedparams()}
    optimizer = chainer.optimizers.Adam(alpha=config.lr)
    optimizer.setup(model)
    it = BucketIterator([corpus.train[i] for i in order], config.batchsize, seed=config.seed)
    updater = chainer.training.StandardUpdater(it, optimizer, converter=convert)
    for _ in range(config.iterations):
        updater.update()
    return {name: p.array for name, p in model.namedparams()}, initial


@pytest.mark.parametrize("communicator, gc_every", [("auto", 50), ("none", 0), ("auto", 2)])
def test_one_process_trains_to_the_serial_reference(tmp_path, communicator, gc_every):
    """One process is a job of one rank (communicator, multi-node optimizer, scattered data),
    and ends with exactly the parameters plain Chainer reaches: dropout masks included. Garbage
    collected in step (``gc_every``, parallel/gcstep.py) changes the timing only."""
    config = TrainConfig(n_train=200, units=16, layers=1, batchsize=16, iterations=7,
                         eval_every=0, n_eval=4, out=str(tmp_path), progress=False,
                         communicator=communicator, gc_every=gc_every)
    metrics = train(config)
    assert metrics["ranks"] == 1 and metrics["iterations"] == 7
    with np.load(tmp_path / "model.npz") as saved:  # keys: parameter paths without the "/"
        trained = {"/" + name: saved[name] for name in saved.files}
    reference, initial = serial_reference(config)
    assert trained.keys() == reference.keys()
    for name in reference:
        np.testing.assert_array_equal(trained[name], reference[name], err_msg=name)
    moved = max(np.abs(reference[k] - initial[k]).max() for k in reference)
    assert moved > 1e-3  # training really moved the weights: the equality means something


def test_data_make_cli_writes_the_corpus(tmp_path, capsys):
    assert cli.main(["data", "make", str(tmp_path), "--train", "200"]) == 0
    for split in ("train", "dev", "test"):
        for lang in ("en", "ja"):
            assert (tmp_path / f"{split}.{lang}").stat().st_size > 0


def run_mpi(n, args, timeout=180):
    env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1"}
    return subprocess.run(["mpiexec", "-n", str(n), sys.executable, "-m", "dlhack.train", *args],
                          check=False, env=env, capture_output=True, text=True, timeout=timeout)


def test_two_ranks_train_data_parallel(tmp_path):
    """Under mpiexec: one metrics file, rank 0 prints, every rank ends with equal weights."""
    out = tmp_path / "run"
    proc = run_mpi(2, TINY + ["--epochs", "1", "--out", str(out), "--communicator", "ring"])
    assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = json.loads((out / "metrics.json").read_text())
    assert metrics["ranks"] == 2 and metrics["global_batchsize"] == 32
    assert proc.stdout.count("test BLEU") == 1  # printed by rank 0 only
    assert sorted(p.name for p in out.iterdir() if p.suffix == ".npz") == ["model.npz"]


def test_profile_prints_the_breakdown(tmp_path):
    proc = run_mpi(2, TINY + ["--iterations", "8", "--eval-every", "0", "--profile",
                              "--out", str(tmp_path)])
    assert proc.returncode == 0, proc.stderr[-3000:]
    for phase in ("forward", "backward", "wait", "allreduce", "optimizer"):
        assert phase in proc.stdout
    profile = json.loads((tmp_path / "metrics.json").read_text())["profile"]
    assert [r["rank"] for r in profile["ranks"]] == [0, 1]
    assert all(np.isfinite(list(r["ms"].values())).all() for r in profile["ranks"])


def test_too_few_held_out_sentences_fail_on_every_rank_without_hanging(tmp_path):
    """--n-eval below the rank count leaves a rank with nothing to score: all ranks say so."""
    proc = run_mpi(3, TINY + ["--iterations", "2", "--n-eval", "2", "--out", str(tmp_path)],
                   timeout=120)
    assert proc.returncode != 0
    assert proc.stderr.count("raise --n-eval to 3 or more") == 3, proc.stderr[-3000:]


class RankOf:
    """Enough of a communicator for ``scatter_index``: a rank, a size, no messages."""

    def __init__(self, rank, size):
        self.rank, self.size = rank, size


def test_shard_trains_alone_on_one_ranks_shard(tmp_path):
    """``--shard R/K`` (the scaling benchmark's ceiling): one process gets exactly the samples
    rank R of a K-rank job gets, in the same order, so it runs the same batches and steps."""
    from dlhack.parallel.scatter import scatter_index
    from dlhack.train import shard_of

    data = [(np.array([i]), np.array([i])) for i in range(11)]
    one = RankOf(0, 1)
    for rank in range(3):
        want = scatter_index(11, RankOf(rank, 3), shuffle=True, seed=5, equal_length=True)
        got = shard_of(data, f"{rank}/3", 5, one)
        assert [int(x[0][0]) for x in got] == list(want)
    with pytest.raises(ValueError, match="one process only"):
        shard_of(data, "3/3", 5, one)
    with pytest.raises(ValueError, match="one process only"):
        shard_of(data, "0/2", 5, RankOf(0, 2))
    config = TrainConfig(n_train=200, units=16, layers=1, batchsize=16, epochs=1, eval_every=0,
                         n_eval=4, out=str(tmp_path), progress=False, shard="1/2")
    assert train(config)["iterations"] == 7  # ceil(ceil(200 / 2) / 16) steps, not 13
