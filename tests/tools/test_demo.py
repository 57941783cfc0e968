"""``dlhack demo`` (dlhack.tools.demo): its training flags are train's own, written once in
``TrainConfig``, and what it passes on reaches ``dlhack train`` unchanged. (``make demo`` itself
runs the whole demo: minutes of training.)"""
import dataclasses

from dlhack.tools import demo
from dlhack.train import TrainConfig, build_parser


def actions(parser):
    return {a.dest: a for a in parser._actions}


def test_epochs_and_batchsize_are_trains_own_flags():
    mine, train = actions(demo.build_parser()), actions(build_parser())
    for name in ("epochs", "batchsize"):
        ours, theirs = mine[name], train[name]
        assert (ours.option_strings, ours.default, ours.type, ours.help) == \
            (theirs.option_strings, theirs.default, theirs.type, theirs.help), name
    defaults = TrainConfig()
    args = demo.build_parser().parse_args([])
    assert (args.epochs, args.batchsize) == (defaults.epochs, defaults.batchsize)


def test_the_probe_runs_train_with_the_demos_settings(monkeypatch, tmp_path):
    seen = []

    def run_train(ranks, args, quiet=False):
        seen.append((ranks, args))
        out = tmp_path / f"probe_{ranks}"
        out.mkdir(exist_ok=True)
        (out / "metrics.json").write_text('{"sentences_per_sec": 123.0}')

    monkeypatch.setattr(demo, "run_train", run_train)
    assert demo.probe(2, tmp_path, 0.5, 32) == 123.0
    ranks, argv = seen[0]
    config = TrainConfig(**vars(build_parser().parse_args(argv)))
    assert ranks == 2 and (config.epochs, config.batchsize, config.progress) == (0.5, 32, False)
    assert dataclasses.asdict(config)["out"] == str(tmp_path / "probe_2")
