"""Weak scaling of translator training: throughput at 1..N ranks, same model and per-rank batch.

    dlhack bench scaling                       # 1 and 2 ranks, demo model, 3 repeats
    dlhack bench scaling --ranks 1 2 4 --units 256 --layers 3

Each point runs ``mpiexec -n k python -m dlhack.train --profile --epochs 1`` (one BLAS
thread per rank) and reads its throughput and per-rank time breakdown. A whole epoch, not a
few steps: every rank count then trains on the same sentences, the same mix of short and long
ones (``--iterations N`` measures N steps instead, quicker and noisier). The rank counts
alternate within each repeat, so slow spells of a noisy machine hit all of them alike.
Weak-scaling efficiency at k ranks = throughput(k) / (k x throughput(1)).
Writes JSON and a PNG (breakdown per step as stacked bars, efficiency as a line).
"""
import argparse
import json
import statistics
import subprocess
import sys
from pathlib import Path

from dlhack import profile
from dlhack.atomic import write_json
from dlhack.bench.model import blas_info
from dlhack.tools.mpiexec import mpiexec_command


def run_point(ranks, args, out):
    """One training run on ``ranks`` ranks; returns its metrics (profile included)."""
    length = ["--iterations", str(args.iterations)] if args.iterations else \
        ["--epochs", str(args.epochs)]
    argv = [sys.executable, "-m", "dlhack.train", "--profile", *length, "--eval-every", "0",
            "--n-eval", "8", "--batchsize", str(args.batchsize), "--units", str(args.units),
            "--layers", str(args.layers), "--no-progress", "--out", str(out)]
    if args.corpus:
        argv += ["--corpus", args.corpus]
    cmd, env = mpiexec_command(ranks, argv, threads=args.threads)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads((Path(out) / "metrics.json").read_text())


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = sorted(results, key=int)
    fig, (ax_bar, ax_eff) = plt.subplots(1, 2, figsize=(10, 3.8))
    bottom = [0.0] * len(ranks)
    for phase in profile.PHASES:
        heights = [results[k]["breakdown_ms"][phase] for k in ranks]
        ax_bar.bar(ranks, heights, bottom=bottom, label=phase)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax_bar.set(xlabel="ranks", ylabel="ms per step (mean over ranks)",
               title="where a step goes")
    ax_bar.legend(fontsize=8)
    ax_eff.plot([int(k) for k in ranks], [results[k]["efficiency"] for k in ranks], "o-")
    ax_eff.axhline(1.0, color="gray", lw=0.5)
    ax_eff.set(xlabel="ranks", ylabel="weak-scaling efficiency", ylim=(0, 1.1),
               title="throughput(k) / (k x throughput(1))")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack bench scaling", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--ranks", type=int, nargs="+", default=[1, 2])
    p.add_argument("-e", "--epochs", type=float, default=1)
    p.add_argument("-i", "--iterations", type=int, help="steps per run instead of epochs")
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("-b", "--batchsize", type=int, default=64, help="per rank")
    p.add_argument("-u", "--units", type=int, default=128)
    p.add_argument("-l", "--layers", type=int, default=2)
    p.add_argument("-c", "--corpus", help="corpus directory (default: embedded)")
    p.add_argument("-t", "--threads", type=int, default=1, help="BLAS threads per rank")
    p.add_argument("-o", "--out", default="result/bench/scaling")
    args = p.parse_args(argv)
    if 1 not in args.ranks:
        args.ranks = [1] + args.ranks  # efficiency is relative to one rank
    out = Path(args.out)
    print(f"BLAS: {blas_info()}; {args.threads} thread(s) per rank")
    runs = {k: [] for k in args.ranks}
    for repeat in range(args.repeats):
        for k in args.ranks:
            m = run_point(k, args, out / f"n{k}")
            runs[k].append(m)
            print(f"repeat {repeat + 1}: {k} rank(s) {m['sentences_per_sec']:8.1f} sentences/s",
                  flush=True)
    results = {}
    one = statistics.median(m["sentences_per_sec"] for m in runs[1])
    for k in args.ranks:
        speeds = [m["sentences_per_sec"] for m in runs[k]]
        # pair each repeat with the 1-rank run of the same repeat: a side-by-side ratio
        effs = [s / (k * m1["sentences_per_sec"]) for s, m1 in zip(speeds, runs[1])]
        order = sorted(range(len(speeds)), key=speeds.__getitem__)
        typical = runs[k][order[len(order) // 2]]  # the median run's breakdown
        results[str(k)] = {
            "sentences_per_sec": speeds, "median": statistics.median(speeds),
            "efficiency": statistics.median(effs), "efficiencies": effs,
            "breakdown_ms": profile.mean_breakdown(typical["profile"]),
            "profile": typical["profile"],
            "verdict": profile.verdict(typical["profile"], baseline=runs[1][0]["profile"],
                                       batchsize=args.batchsize),
        }
    print(f"\n{'ranks':>5} {'sentences/s':>12} {'speed-up':>9} {'efficiency':>11}")
    for k in args.ranks:
        r = results[str(k)]
        print(f"{k:>5} {r['median']:>12.1f} {r['median'] / one:>9.2f} {r['efficiency']:>11.3f}")
    for k in args.ranks:
        print(f"\n{k} rank(s), ms per step:\n{profile.format_breakdown(results[str(k)]['profile'])}")
        if k > 1:
            print(results[str(k)]["verdict"])
    write_json(out / "scaling.json", {"blas": blas_info(), "args": vars(args),
                                      "results": results})
    plot(results, out / "scaling.png")
    print(f"\nwrote {out / 'scaling.json'} and {out / 'scaling.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
