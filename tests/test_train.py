"""Training end to end at a tiny size: one process (a job of one rank), the CLI, and 2 ranks
under mpiexec; one process against a serial reference in plain Chainer."""
import dataclasses
import inspect
import json
import subprocess
import sys

import chainer
import numpy as np
import pytest

from dlhack import cli
from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.train import TrainConfig, build_parser, train
from tests.support import course_env

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


def saved_parameters(folder):
    with np.load(folder / "model.npz") as saved:
        return {name: saved[name] for name in saved.files}


def assert_close_and_trained(got, want, initial=None):
    assert got.keys() == want.keys()
    for name in want:
        np.testing.assert_allclose(got[name], want[name], rtol=1e-4, atol=2e-5, err_msg=name)
    if initial is not None:  # training really moved the weights: the closeness means something
        assert max(np.abs(want[k] - initial[k]).max() for k in want) > 1e-3


def test_fused_trains_to_the_readable_models_parameters(tmp_path):
    """--impl fused (FusedSeq2seq and PackedAdam) takes the steps the readable model and
    Chainer's Adam take, from the same seed and batches, to float tolerance (no dropout: the
    two draw their masks differently)."""
    trained = {}
    for impl in ("fast", "fused"):
        config = TrainConfig(n_train=200, units=16, layers=2, batchsize=16, iterations=6,
                             dropout=0.0, eval_every=0, n_eval=4, out=str(tmp_path / impl),
                             progress=False, impl=impl)
        train(config)
        trained[impl] = saved_parameters(tmp_path / impl)
    _, initial = serial_reference(dataclasses.replace(config, impl="fast"))
    initial = {name.lstrip("/"): a for name, a in initial.items()}
    assert_close_and_trained(trained["fused"], trained["fast"], initial)


def test_data_make_cli_writes_the_corpus(tmp_path, capsys):
    assert cli.main(["data", "make", str(tmp_path), "--train", "200"]) == 0
    for split in ("train", "dev", "test"):
        for lang in ("en", "ja"):
            assert (tmp_path / f"{split}.{lang}").stat().st_size > 0


def run_mpi(n, args, timeout=180):
    env = course_env()
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


def test_balanced_ranks_train_as_one_process_with_their_global_batch(tmp_path):
    """--balance: 2 ranks of batch 8, each given its share by tokens of every global batch, end
    with the parameters of one process of batch 16 on the same batches (the normalizer keeps
    the gradient mean exact), with the default communicator (shared memory, on one node)."""
    common = ["--n-train", "200", "--units", "16", "--layers", "1", "--n-eval", "4",
              "--iterations", "5", "--eval-every", "0", "--dropout", "0", "--balance",
              "--no-progress"]
    for n, batch in ((1, 16), (2, 8)):
        proc = run_mpi(n, common + ["--batchsize", str(batch), "--out", str(tmp_path / str(n))])
        assert proc.returncode == 0, proc.stderr[-3000:]
    one = json.loads((tmp_path / "1" / "metrics.json").read_text())
    two = json.loads((tmp_path / "2" / "metrics.json").read_text())
    assert one["global_batchsize"] == two["global_batchsize"] == 16
    assert two["communicator"] == "shm"  # auto, on one node: the means added in shared memory
    assert_close_and_trained(saved_parameters(tmp_path / "2"), saved_parameters(tmp_path / "1"))


def test_fused_ranks_divide_the_update_and_train_as_one_process(tmp_path):
    """--impl fused on 2 ranks of one node (shm, the default) divides Adam's step: each rank
    updates its chunk of the parameters (dlhack.parallel.sharded). The run ends where one
    process with the global batch ends, as with --no-shard-update, and the profile still
    times the averaging and the update."""
    common = ["--n-train", "200", "--units", "16", "--layers", "1", "--n-eval", "4",
              "--iterations", "5", "--eval-every", "0", "--dropout", "0", "--balance",
              "--no-progress", "--impl", "fused", "--profile"]
    runs = {"one": (1, 16, []), "sharded": (2, 8, []), "whole": (2, 8, ["--no-shard-update"])}
    for name, (n, batch, extra) in runs.items():
        out = str(tmp_path / name)
        proc = run_mpi(n, common + ["--batchsize", str(batch), "--out", out, *extra])
        assert proc.returncode == 0, proc.stderr[-3000:]
    metrics = {name: json.loads((tmp_path / name / "metrics.json").read_text()) for name in runs}
    assert [metrics[name]["sharded_update"] for name in runs] == [False, True, False]
    for rank in metrics["sharded"]["profile"]["ranks"]:
        assert rank["ms"]["allreduce"] > 0 and rank["ms"]["optimizer"] > 0, rank
    _, initial = serial_reference(TrainConfig(n_train=200, units=16, layers=1, batchsize=16,
                                              iterations=0, dropout=0.0))
    initial = {name.lstrip("/"): a for name, a in initial.items()}
    one = saved_parameters(tmp_path / "one")
    assert_close_and_trained(saved_parameters(tmp_path / "sharded"), one, initial)
    assert_close_and_trained(saved_parameters(tmp_path / "whole"), one)


def test_shares_that_follow_speed_still_train_as_one_process(tmp_path):
    """--balance-speed: from step 40 each rank's share of a global batch follows its measured
    speed (parallel/speed_shares.py); the run still ends where one process with the global
    batch ends. Without --balance there is nothing to share, and every rank says so."""
    common = ["--n-train", "200", "--units", "16", "--layers", "1", "--n-eval", "4",
              "--iterations", "45", "--eval-every", "0", "--dropout", "0", "--balance",
              "--no-progress", "--impl", "fused"]
    for name, n, batch in (("one", 1, 16), ("speed", 2, 8)):
        proc = run_mpi(n, common + ["--batchsize", str(batch), "--out", str(tmp_path / name),
                                    "--balance-speed"])
        assert proc.returncode == 0, proc.stderr[-3000:]
    assert_close_and_trained(saved_parameters(tmp_path / "speed"), saved_parameters(
        tmp_path / "one"))
    proc = run_mpi(2, TINY + ["--iterations", "2", "--balance-speed", "--out", str(tmp_path)])
    assert proc.returncode != 0
    assert proc.stderr.count("TypeError: SpeedShares deals BalancedIterator") == 2, \
        proc.stderr[-3000:]


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


def test_every_setting_has_one_flag_with_help_and_the_dataclass_default():
    """The parser is built from ``TrainConfig``: a setting cannot be written twice."""
    parser = build_parser()
    actions = [a for a in parser._actions if a.dest != "help"]
    fields = {f.name: f for f in dataclasses.fields(TrainConfig)}
    assert sorted(a.dest for a in actions) == sorted(fields)  # one flag per field, no other
    for action in actions:
        longs = [o for o in action.option_strings if o.startswith("--")]
        assert len(longs) == 1 and action.help, action.option_strings
        field = fields[action.dest]
        assert field.metadata["help"] == action.help
        if field.type is bool:  # a switch: off by default "--name", on by default "--no-name"
            assert longs[0].startswith("--no-") == field.default
    assert vars(parser.parse_args([])) == dataclasses.asdict(TrainConfig())


@pytest.mark.parametrize("argv, setting", [
    (["-c", "DIR"], {"corpus": "DIR"}),
    (["--n-train", "300", "--vocab-size", "50"], {"n_train": 300, "vocab_size": 50}),
    (["-u", "16", "-l", "1", "-b", "8", "-e", "0.5", "-i", "3", "-s", "4", "-o", "x"],
     {"units": 16, "layers": 1, "batchsize": 8, "epochs": 0.5, "iterations": 3, "seed": 4,
      "out": "x"}),
    (["--no-attention", "--no-progress"], {"attention": False, "progress": False}),
    (["-g", "--share-gpu", "--profile", "--overlap"],
     {"gpu": True, "share_gpu": True, "profile": True, "overlap": True}),
    (["--impl", "nstep", "--communicator", "chainermn:pure_nccl", "--lr", "0.01"],
     {"impl": "nstep", "communicator": "chainermn:pure_nccl", "lr": 0.01}),
    (["--scale-lr", "sqrt", "--warmup", "0.5"], {"scale_lr": "sqrt", "warmup": 0.5}),
    (["--eval-every", "0", "--n-eval", "8", "--snapshot-every", "5", "--resume", "auto",
      "--max-length", "9", "--json", "m.json", "--gc-every", "0", "--dropout", "0"],
     {"eval_every": 0, "n_eval": 8, "snapshot_every": 5, "resume": "auto", "max_length": 9,
      "json": "m.json", "gc_every": 0, "dropout": 0}),
])
def test_flags_set_their_field(argv, setting):
    config = TrainConfig(**vars(build_parser().parse_args(argv)))
    assert config == dataclasses.replace(TrainConfig(), **setting)


def test_impl_takes_only_its_choices(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["--impl", "slow"])
    assert "invalid choice" in capsys.readouterr().err


def test_benchmark_knobs_stay_out_of_the_learners_script():
    """``--shard`` and ``--minutes`` serve one benchmark each: they live in dlhack.bench."""
    import dlhack.train

    flags = {o for a in build_parser()._actions for o in a.option_strings}
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    source = inspect.getsource(dlhack.train)
    for knob in ("shard", "minutes"):
        assert f"--{knob}" not in flags and knob not in fields and f"--{knob}" not in source
    assert "TimeLimit" not in source


def test_the_data_parallel_lines_stay_six_and_in_train():
    """Lesson 3 greps ``# MN:`` (six lines, the docstring's mention aside); lesson 8 shows the
    device lines of ``train`` itself."""
    import dlhack.train

    marked = [line for line in inspect.getsource(dlhack.train).splitlines()
              if "# MN:" in line and "``# MN:``" not in line]
    assert len(marked) == 6, marked
    device = [line for line in inspect.getsource(train).splitlines()
              if "intra_rank" in line or "config.gpu:" in line or "device.use()" in line]
    assert len(device) == 3, device


def test_gpu_is_chosen_by_the_layout_check(monkeypatch):
    """``--gpu`` asks ``select_gpu`` (intra_rank % visible, checked), and stops on its error
    before any data is read."""
    import dlhack.train
    from dlhack.parallel.devices import LayoutError

    asked = []

    def refuse(comm, share=False):
        asked.append(share)
        raise LayoutError("ranks 0, 1 would share one GPU")

    monkeypatch.setattr(dlhack.train, "select_gpu", refuse)
    for share in (False, True):
        with pytest.raises(LayoutError, match="would share"):
            train(TrainConfig(gpu=True, share_gpu=share), load=pytest.fail)
    assert asked == [False, True]
