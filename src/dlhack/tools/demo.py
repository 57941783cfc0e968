"""The main job of ``make demo``: train the translator data-parallel and measure the speed-up.

    dlhack demo                    # 2 ranks, embedded corpus, writes result/demo/
    dlhack demo --ranks 1 --epochs 1

1. A throughput probe: one epoch over the whole corpus (same per-rank batch) on 1 rank and on
   N ranks, measured in this run, so the speed-up compares like with like: the same
   sentences, so the same mix of short and long ones.
2. The full training run on N ranks under mpiexec: progress bar, dev BLEU per epoch, then
   corpus BLEU on the held-out test split, sample translations and throughput.

Results go to ``OUT/metrics.json`` (with the speed-up added) and ``OUT/training.png``.
"""
import argparse
import dataclasses
import json
import subprocess
import sys
from pathlib import Path

from dlhack.atomic import write_json
from dlhack.jobs.mpiexec import mpiexec_command
from dlhack.train import TrainConfig, add_flag


def run_train(ranks, args, quiet=False):
    """``mpiexec -n ranks dlhack train ARGS`` with one BLAS thread per rank."""
    cmd, env = mpiexec_command(ranks, [sys.executable, "-m", "dlhack.train", *args])
    out = subprocess.DEVNULL if quiet else None
    subprocess.run(cmd, env=env, check=True, stdout=out)


def probe(ranks, out, epochs, batchsize):
    """Throughput (sentences/s) of ``epochs`` of training on ``ranks`` ranks."""
    path = Path(out) / f"probe_{ranks}" / "metrics.json"
    run_train(ranks, ["--epochs", str(epochs), "--eval-every", "0", "--n-eval", "8",
                      "--batchsize", str(batchsize), "--no-progress", "--out",
                      str(path.parent)], quiet=True)
    return json.loads(path.read_text())["sentences_per_sec"]


def build_parser():
    """``dlhack demo``'s flags: its own, and train's ``--epochs`` and ``--batchsize`` as
    ``TrainConfig`` declares them (flags, default, help), so they are written once."""
    parser = argparse.ArgumentParser(prog="dlhack demo", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-n", "--ranks", type=int, default=2, help="ranks for the training run")
    parser.add_argument("-o", "--out", default="result/demo", help="folder for the results")
    fields = {field.name: field for field in dataclasses.fields(TrainConfig)}
    for name in ("epochs", "batchsize"):
        add_flag(parser, fields[name])
    parser.add_argument("--probe-epochs", type=float, default=1,
                        help="epochs in each throughput probe (0: skip the probe)")
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    out = Path(args.out)

    speeds = {}
    if args.probe_epochs:
        for ranks in sorted({1, args.ranks}):
            print(f"throughput probe: {args.probe_epochs:g} epoch(s) on {ranks} rank(s)...",
                  flush=True)
            speeds[ranks] = probe(ranks, out, args.probe_epochs, args.batchsize)
            print(f"  {speeds[ranks]:.0f} sentences/s", flush=True)

    print(f"\ntraining on {args.ranks} rank(s), batch {args.batchsize} per rank "
          f"(effective batch {args.batchsize * args.ranks})", flush=True)
    run_train(args.ranks, ["--epochs", str(args.epochs), "--batchsize", str(args.batchsize),
                           "--out", str(out)])

    metrics_path = out / "metrics.json"
    metrics = json.loads(metrics_path.read_text())
    if len(speeds) == 2:
        one, many = speeds[1], speeds[args.ranks]
        metrics["probe_sentences_per_sec"] = {str(k): v for k, v in speeds.items()}
        metrics["speedup"] = many / one
        metrics["scaling_efficiency"] = many / one / args.ranks
        print(f"\nspeed-up at {args.ranks} ranks over 1 rank (same per-rank batch, measured in "
              f"this run): {many / one:.2f}x ({many:.0f} vs {one:.0f} sentences/s, "
              f"efficiency {many / one / args.ranks:.2f})")
    write_json(metrics_path, metrics)
    print(f"test BLEU {metrics['bleu']:.1f}; metrics in {metrics_path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
