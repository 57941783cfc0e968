"""Weak scaling of translator training: throughput at 1..N ranks, same model and per-rank batch.

    dlhack bench scaling                       # 1 and 2 ranks, demo model, 3 repeats
    dlhack bench scaling --ranks 1 2 4 --units 256 --layers 3
    dlhack bench scaling --overlap             # also k ranks with the overlapped allreduce
    dlhack bench scaling --compare-gc          # also k ranks with Python's own collector
    dlhack bench scaling --compare-communicator ring   # also k ranks with the ring
    dlhack bench scaling --impl fused --compare-update  # also every rank updating everything
    dlhack bench scaling --compare-memory      # also k ranks giving freed memory back
    dlhack bench scaling --floor               # also the machine's own floor (sync_floor.py)

Each point is ``mpiexec -n k python -m dlhack.train --profile --epochs 1`` (one BLAS thread per
rank): its throughput and per-rank time breakdown. A whole epoch, so every rank count trains on
the same sentences (``--iterations N``: N steps, quicker and noisier). Weak-scaling efficiency
at k ranks = throughput(k) / (k x throughput(1)), each repeat paired with its own 1-rank run;
the rank counts, and the order of each count's variants, turn round every repeat, so a slow
spell of a noisy machine hits all of them alike.

The ceiling: k ranks on one machine share its cores, caches and memory bus. For every k > 1,
each repeat also runs k single processes side by side, process i alone on rank i's shard of
the k-rank run (``python -m dlhack.bench.training --shard i/k``: the same batches and steps,
no MPI in a step), and adds up their throughput. The k-rank throughput over that ceiling is
what communication and waiting leave: the table gives its median, then each repeat's (paired
with the ceiling run of the same repeat: their spread is the machine's noise). ``--floor`` runs,
in each repeat, ``dlhack.bench.sync_floor`` for steps as long as the k-rank run's: what a barrier
after every step costs equal work on this machine, with nothing to send and nothing uneven;
the last lines set each run's wait beside the floor's of the same repeat
(``scaling_report.waits_against_floor``).
Each row's breakdown per step is its median run's; the line under them sets every phase of the
k-rank run against the ceiling's in the same repeat (``scaling_report.paired_phases``).
``--overlap`` and each ``--compare-*`` flag add a k-rank run with one ``dlhack train`` setting
changed (``--help`` names it), printed beside the plain run; with ``--overlap``, "backward"
includes the communication it hides.

Cost: repeats x (every rank count, and for k > 1 each variant asked for) training runs of one
epoch each (``--floor``: and 320 steps as long as a k-rank one); writes JSON and a PNG
(breakdown per step as stacked bars, efficiency as lines).
"""
import argparse
import json
import statistics
import subprocess
import sys
from functools import partial
from pathlib import Path

from dlhack import step_profile
from dlhack.atomic import write_json
from dlhack.bench import sync_floor
from dlhack.bench.model import blas_info
from dlhack.bench.scaling_plot import plot
from dlhack.bench.scaling_report import (
    against_ceiling,
    paired_phases,
    print_report,
    print_waits,
    waits_against_floor,
)
from dlhack.jobs.mpiexec import mpiexec_command


def train_command(ranks, args, out, overlap=False, shard=None):
    """``(cmd, env)`` of one ``dlhack train --profile`` run on ``ranks`` ranks; ``shard``
    ("R/K"): one process alone on rank R's shard of a K-rank run (``dlhack.bench.training``)."""
    iterations = args.iterations
    length = ["--iterations", str(iterations)] if iterations else ["--epochs", str(args.epochs)]
    module = "dlhack.bench.training" if shard else "dlhack.train"
    argv = [sys.executable, "-m", module, "--profile", *length, "--eval-every", "0",
            "--n-eval", "8", "--batchsize", str(args.batchsize), "--units", str(args.units),
            "--layers", str(args.layers), "--gc-every", str(args.gc_every), "--no-progress",
            "--out", str(out)]
    if not shard:
        argv += ["--communicator", args.communicator]
        argv += [] if getattr(args, "shard_update", True) else ["--no-shard-update"]
        argv += [] if getattr(args, "keep_memory", True) else ["--no-keep-memory"]
        argv += ["--balance-speed"] if getattr(args, "balance_speed", False) else []
    if args.corpus:
        argv += ["--corpus", args.corpus]
    if overlap:
        argv.append("--overlap")
    argv += ["--impl", args.impl] + (["--balance"] if args.balance else [])
    if shard:
        argv += ["--communicator", "none", "--shard", shard]
    return mpiexec_command(ranks, argv, threads=args.threads)


def run_point(ranks, args, out, overlap=False):
    """One training run on ``ranks`` ranks; returns its metrics (profile included)."""
    cmd, env = train_command(ranks, args, out, overlap)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    return json.loads((Path(out) / "metrics.json").read_text())


def run_alone(k, args, out):
    """``k`` independent processes side by side (the ceiling), process ``i`` training alone on
    rank ``i``'s shard of the k-rank run (``--shard i/k``: the same batches, the
    same number of steps, no MPI in a step); returns their metrics, summed: throughput added
    up, each process's breakdown as one "rank" of the profile."""
    procs = []
    for i in range(k):
        cmd, env = train_command(1, args, Path(out) / f"p{i}", shard=f"{i}/{k}")
        procs.append(subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL))
    if any(proc.wait() for proc in procs):
        raise RuntimeError(f"a side-by-side run failed (see {out})")
    runs = [json.loads((Path(out) / f"p{i}" / "metrics.json").read_text()) for i in range(k)]
    ranks = [dict(m["profile"]["ranks"][0], rank=i) for i, m in enumerate(runs)]
    return {"sentences_per_sec": sum(m["sentences_per_sec"] for m in runs),
            "iterations": runs[0]["iterations"], "profile": {"ranks": ranks}}


def summarise(runs, baseline, args):
    """``{str(k): figures}`` for ``runs`` (``{k: [metrics per repeat]}``); each repeat's
    efficiency is paired with the 1-rank run of the same repeat (``baseline[1]``)."""
    results = {}
    for k, ms in runs.items():
        speeds = [m["sentences_per_sec"] for m in ms]
        # pair each repeat with the 1-rank run of the same repeat: a side-by-side ratio
        effs = [s / (k * m1["sentences_per_sec"]) for s, m1 in zip(speeds, baseline[1])]
        order = sorted(range(len(speeds)), key=speeds.__getitem__)
        typical = ms[order[len(order) // 2]]  # the median run's breakdown
        results[str(k)] = {
            "sentences_per_sec": speeds, "median": statistics.median(speeds),
            "efficiency": statistics.median(effs), "efficiencies": effs,
            "breakdown_ms": step_profile.mean_breakdown(typical["profile"]),
            "profile": typical["profile"],
            "verdict": step_profile.verdict(typical["profile"], baseline=baseline[1][0]["profile"],
                                       batchsize=args.batchsize),
            "runs": ms,  # dropped before the JSON is written
        }
    return results


def parse_args(argv):
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
    p.add_argument("--gc-every", type=int, default=50,
                   help="dlhack train --gc-every: garbage collected in step every N steps, on "
                        "every rank at once (0: Python's own collector, as before)")
    p.add_argument("-o", "--out", default="result/bench/scaling")
    p.add_argument("--impl", choices=["fast", "nstep", "fused"], default="fast",
                   help="dlhack train --impl (fused: FusedSeq2seq with PackedAdam)")
    p.add_argument("--balance", action="store_true",
                   help="dlhack train --balance: each global batch dealt among ranks by tokens")
    also = "also k > 1 ranks with dlhack train "  # a variant, run beside the plain run
    p.add_argument("--overlap", action="store_true", help=also + "--overlap")
    p.add_argument("--compare-gc", action="store_true", help=also + "--gc-every 0")
    p.add_argument("-C", "--communicator", default="auto", help="dlhack train --communicator")
    p.add_argument("--compare-communicator", metavar="NAME", help=also + "--communicator NAME")
    p.add_argument("--compare-update", action="store_true", help=also + "--no-shard-update")
    p.add_argument("--compare-memory", action="store_true", help=also + "--no-keep-memory")
    p.add_argument("--compare-speed", action="store_true", help=also + "--balance-speed")
    p.add_argument("--floor", action="store_true", help="also, for k > 1, the machine's own "
                   "floor in each repeat (dlhack.bench.sync_floor)")
    p.add_argument("--no-ceiling", dest="ceiling", action="store_false",
                   help="skip the k independent processes side by side (the ceiling)")
    args = p.parse_args(argv)
    if 1 not in args.ranks:
        args.ranks = [1] + args.ranks  # efficiency is relative to one rank
    return args


def variants(args):
    """``[(name, folder, args, overlap)]`` of every k-rank variant, in the order of the tables
    ``run_repeats`` keeps between the plain runs' and the ceiling's."""
    def changed(**settings):
        return argparse.Namespace(**{**vars(args), **settings})
    other = args.compare_communicator
    return [("overlapped", "overlap", args, True),
            ("Python gc", "gc-off", changed(gc_every=0), False),
            (f"--communicator {other}", other, changed(communicator=other), False),
            ("whole update", "whole-update", changed(shard_update=False), False),
            ("memory given back", "given-back", changed(keep_memory=False), False),
            ("speed shares", "speed", changed(balance_speed=True), False)]


def plan_of(k, args, tables, out):
    """The runs of one repeat at ``k`` ranks: ``[(name, table, run)]``, the plain run first."""
    runs, *compared, alone = tables
    plan = [("plain", runs, partial(run_point, k, args, out / f"n{k}"))]
    for (name, folder, run_args, overlap), table in zip(variants(args), compared):
        if k in table:
            plan.append((name, table, partial(run_point, k, run_args, out / f"n{k}-{folder}",
                                              overlap=overlap)))
    if k in alone:  # each process: one rank's shard, batches and steps
        plan.append((f"{k} alone side by side", alone,
                     partial(run_alone, k, args, out / f"alone{k}")))
    return plan


def run_repeats(args, out):
    """Every repeat of every run; returns ``(runs, overlapped, gc_off, other, whole,
    given_back, speed, alone, floors)``, each ``{k: [metrics per repeat]}``."""
    many = [k for k in args.ranks if k > 1]
    tables = ({k: [] for k in args.ranks}, *({k: [] for k in many if wanted} for wanted in (
        args.overlap, args.compare_gc, args.compare_communicator, args.compare_update,
        args.compare_memory, args.compare_speed, args.ceiling)))
    runs, alone = tables[0], tables[-1]
    floors = {k: [] for k in many if args.floor}
    for repeat in range(args.repeats):
        for k in args.ranks:
            plan = plan_of(k, args, tables, out)
            # The variants of one rank count, in an order that turns round every repeat, so
            # that a slow spell does not always hit the same one.
            shift = repeat % len(plan)
            for _, table, run in plan[shift:] + plan[:shift]:
                table[k].append(run())
            if k in alone and alone[k][-1]["iterations"] != runs[k][-1]["iterations"]:
                raise RuntimeError(f"the side-by-side runs took {alone[k][-1]['iterations']} "
                                   f"steps, a rank of the {k}-rank run {runs[k][-1]['iterations']}")
            print(f"repeat {repeat + 1}: {k} rank(s) {runs[k][-1]['sentences_per_sec']:8.1f} "
                  "sentences/s" + "".join(f", {name} {table[k][-1]['sentences_per_sec']:8.1f}"
                                          for name, table, _ in plan[1:]), flush=True)
            if k in floors:  # steps as long as this repeat's k-rank run's
                step = sum(step_profile.mean_breakdown(runs[k][-1]["profile"]).values())
                floors[k].append(sync_floor.run(k, step, out / f"floor{k}.json", args.threads))
    return (*tables, floors)


def main(argv=None):
    args = parse_args(argv)
    out = Path(args.out)
    print(f"BLAS: {blas_info()}; {args.threads} thread(s) per rank")
    runs, overlapped, gc_off, other, whole, given_back, speed, alone, floors = run_repeats(
        args, out)
    named = {"results": runs, "ceiling": alone, "overlap": overlapped, "gc_off": gc_off,
             "other": other, "whole": whole, "given_back": given_back, "speed": speed}
    tables = {key: summarise(table, runs, args) for key, table in named.items()}
    against_ceiling(tables)
    paired_phases(tables)
    print_report(args, tables)
    floor = {str(k): sync_floor.report(f, tables["results"][str(k)].get("of_ceiling"), k)
             for k, f in floors.items()}
    for key, figures in floor.items():  # the wait beyond what equal work waits on this machine
        figures["waits"] = waits_against_floor(tables, key, figures["repeats"])
        print_waits(key, figures["waits"])
    for table in tables.values():
        for r in table.values():
            del r["runs"]
    write_json(out / "scaling.json", {"blas": blas_info(), "args": vars(args), **tables,
                                      "floor": floor})
    plot(tables["results"], tables["ceiling"], tables["overlap"], out / "scaling.png")
    print(f"\nwrote {out / 'scaling.json'} and {out / 'scaling.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
