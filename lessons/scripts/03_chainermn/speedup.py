"""Lesson 3: the speed-up of the translator at 1 and 2 ranks, with ChainerMN and with
dlhack.parallel, measured in one run.

    python lessons/scripts/03_chainermn/speedup.py --repeats 5 --out result/speedup

For each repeat it runs train_chainermn.py and train_dlhack.py (beside this file) at 1 and at 2
ranks, in alternating order, so that a slow spell of the machine falls on both libraries and
both rank counts. Each job has one BLAS thread per rank, and glibc keeps the memory a step
frees for the next one (``dlhack.model.heap.kept_memory_environment``, what ``dlhack train``
does from inside): otherwise how many pages each step faults in again depends on where the top
of the heap happens to lie, which differs between the two scripts for reasons that have nothing
to do with either library (even at 1 rank, where neither sends anything).

Every job is timed three ways at once. The job: training sentences (iterations x batchsize x
ranks) over the trainer's own elapsed_time at its last log entry (imports and corpus building
left out), the dev set scored twice on the way. Edit 5 splits that scoring over the ranks, but
only training sentences are counted, so it can push the figure above 2. The steps alone: the
same sentences over that time less the dev set's. The dev set alone: the seconds its scoring
took, as rank 0's Evaluator extension saw them (``timed_job``; ChainerMN's and dlhack.parallel's
multi-node evaluators are both Evaluators whose ``evaluate`` was replaced). All three come from
the same job, so a slow spell falls on them alike. The speed-up of each is the median of the
2-rank runs over the median of the 1-rank runs; it prints a table and writes speedup.json.
"""
import argparse
import json
import os
import runpy
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dlhack.atomic import write_json
from dlhack.jobs.mpiexec import launched_rank, mpiexec_command
from dlhack.model.heap import kept_memory_environment

HERE = Path(__file__).resolve().parent
SCRIPTS = {"chainermn": HERE / "train_chainermn.py", "dlhack.parallel": HERE / "train_dlhack.py"}
DEV_SECONDS = "dev_seconds.json"  # what timed_job writes beside the trainer's log
MEASURES = {"speedup": "job", "speedup_steps_alone": "steps", "speedup_dev_set": "dev set"}


def timed_job(script, argv, out):
    """Run ``script`` with ``argv`` as this rank's program, adding up the seconds every call of
    a Chainer ``Evaluator`` extension takes; rank 0 writes the list to ``out/dev_seconds.json``."""
    from chainer.training.extensions import Evaluator  # after dlhack, which quiets Chainer

    seconds, call = [], Evaluator.__call__

    def timed(self, trainer=None):
        start = time.perf_counter()
        try:
            return call(self, trainer)
        finally:
            seconds.append(time.perf_counter() - start)

    Evaluator.__call__ = timed
    sys.argv = [str(script), *argv]
    runpy.run_path(str(script), run_name="__main__")
    if launched_rank() in (None, 0):
        write_json(Path(out) / DEV_SECONDS, seconds)


def run_job(script, n, args, out):
    """One training job at ``n`` ranks: ``{"job", "steps", "dev set"}`` (the first two in
    training sentences per second over all ranks, the dev set in seconds)."""
    argv = ["--iterations", args.iterations, "--batchsize", args.batchsize,
            "--n-train", args.n_train, "--units", args.units, "--out", out]
    cmd, env = mpiexec_command(n, [sys.executable, __file__, "--job", str(script),
                                   *map(str, argv)])
    env.update(kept_memory_environment())
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, timeout=args.timeout)
    elapsed = json.loads((Path(out) / "log").read_text())[-1]["elapsed_time"]
    dev = sum(json.loads((Path(out) / DEV_SECONDS).read_text()))
    sentences = args.iterations * args.batchsize * n
    return {"job": sentences / elapsed, "steps": sentences / (elapsed - dev), "dev set": dev}


def medians(runs):
    """``{lib: {measure: (1-rank median, 2-rank median)}}`` over the repeats."""
    return {lib: {measure: tuple(np.median([job[measure] for job in by[n]]) for n in (1, 2))
                  for measure in MEASURES.values()} for lib, by in runs.items()}


def speedups(runs):
    """Each library's speed-up by each measure: the 2-rank median over the 1-rank median (for
    the dev set, whose sentences are the same at any rank count: its seconds the other way)."""
    result = {key: {} for key in MEASURES}
    for lib, by in medians(runs).items():
        for key, measure in MEASURES.items():
            one, two = by[measure]
            result[key][lib] = float(one / two if measure == "dev set" else two / one)
    return result


def print_table(runs, result):
    print(f"{'library':16} {'timed':>8} {'1 rank':>8} {'2 ranks':>8} {'speed-up':>9}  (medians: "
          "training sentences/s; the dev set: seconds)")
    by_lib = medians(runs)
    for key, measure in MEASURES.items():
        for lib, by in by_lib.items():
            one, two = by[measure]
            form = "8.2f" if measure == "dev set" else "8.0f"
            print(f"{lib:16} {measure:>8} {one:{form}} {two:{form}} {result[key][lib]:8.2f}x")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-i", "--iterations", type=int, default=40, help="training steps per job")
    p.add_argument("-b", "--batchsize", type=int, default=32, help="sentences per rank per step")
    p.add_argument("--n-train", type=int, default=4000, help="embedded corpus size")
    p.add_argument("-u", "--units", type=int, default=64)
    p.add_argument("-r", "--repeats", type=int, default=3, help="runs of each (library, ranks)")
    p.add_argument("--timeout", type=float, default=600, help="seconds per job")
    p.add_argument("-o", "--out", type=Path, default=Path("result/speedup"))
    args = p.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    runs = {lib: {1: [], 2: []} for lib in SCRIPTS}
    for repeat in range(args.repeats):
        order = [(lib, n) for n in (1, 2) for lib in SCRIPTS]
        for lib, n in order if repeat % 2 == 0 else order[::-1]:
            out = args.out / f"{lib}-{n}-{repeat}"
            runs[lib][n].append(run_job(SCRIPTS[lib], n, args, out))
    result = speedups(runs)
    print_table(runs, result)
    write_json(args.out / "speedup.json", {"load_average": os.getloadavg()[0],
                                           "cores": os.cpu_count(), "args": vars(args),
                                           "runs": runs, **result})
    return result


if __name__ == "__main__":
    if sys.argv[1:2] == ["--job"]:  # one rank of one job (run_job starts it under mpiexec)
        timed_job(Path(sys.argv[2]), sys.argv[3:], sys.argv[sys.argv.index("--out") + 1])
    else:
        main()
