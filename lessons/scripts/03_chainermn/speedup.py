"""Lesson 3: the speed-up of the translator at 1 and 2 ranks, with ChainerMN and with
dlhack.parallel, measured in one run.

    python lessons/scripts/03_chainermn/speedup.py --repeats 5 --out result/speedup

For each repeat it runs train_chainermn.py and train_dlhack.py (beside this file) at 1 and at 2
ranks, in alternating order, so that a slow spell of the machine falls on both libraries and
both rank counts. Throughput is sentences per second over all ranks during training: iterations
x batchsize x ranks, divided by the trainer's own elapsed_time at its last log entry (imports
and corpus building left out). Each job has one BLAS thread per rank, and glibc keeps the
memory a step frees for the next one (``dlhack.model.heap.kept_memory_environment``, what
``dlhack train`` does from inside): otherwise how many pages each step faults in again depends on
where the top of the heap happens to lie, which differs between the two scripts for reasons
that have nothing to do with either library (even at 1 rank, where neither sends anything).
The speed-up of a library is the median of its 2-rank runs over the median of its 1-rank runs;
it prints a table and writes speedup.json.

Every job is timed twice over: as the lesson runs it, with the dev set scored twice (edit 5
splits that work over the ranks, but only training sentences are counted, so it can push the
figure above 2), and with ``--no-eval``, the training steps alone.
"""
import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import numpy as np

from dlhack.jobs.mpiexec import mpiexec_command
from dlhack.model.heap import kept_memory_environment

HERE = Path(__file__).resolve().parent
SCRIPTS = {"chainermn": HERE / "train_chainermn.py", "dlhack.parallel": HERE / "train_dlhack.py"}


def throughput(script, n, args, out, evaluate=True):
    """Sentences per second over all ranks of one training job at ``n`` ranks."""
    cmd, env = mpiexec_command(n, [sys.executable, str(script), "--iterations", args.iterations,
                                   "--batchsize", args.batchsize, "--n-train", args.n_train,
                                   "--units", args.units, "--out", out,
                                   *([] if evaluate else ["--no-eval"])])
    env.update(kept_memory_environment())
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL, timeout=args.timeout)
    last = json.loads((Path(out) / "log").read_text())[-1]
    return args.iterations * args.batchsize * n / last["elapsed_time"]


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
    variants = {"speedup": True, "speedup_steps_alone": False}  # with the dev set, without it
    runs = {key: {lib: {1: [], 2: []} for lib in SCRIPTS} for key in variants}
    for repeat in range(args.repeats):
        order = [(key, lib, n) for n in (1, 2) for lib in SCRIPTS for key in variants]
        for key, lib, n in order if repeat % 2 == 0 else order[::-1]:
            out = args.out / f"{key}-{lib}-{n}-{repeat}"
            runs[key][lib][n].append(throughput(SCRIPTS[lib], n, args, out, variants[key]))
    result = {"load_average": os.getloadavg()[0], "cores": os.cpu_count(), "args": vars(args),
              "runs": runs, **{key: {} for key in variants}}
    print(f"{'library':16} {'dev set':>8} {'1 rank':>8} {'2 ranks':>8} {'speed-up':>9}"
          "  (training sentences/s, medians)")
    for key, evaluate in variants.items():
        for lib, by in runs[key].items():
            one, two = np.median(by[1]), np.median(by[2])
            result[key][lib] = two / one
            print(f"{lib:16} {'scored' if evaluate else 'none':>8} {one:8.0f} {two:8.0f} "
                  f"{two / one:8.2f}x")
    (args.out / "speedup.json").write_text(json.dumps(result, indent=1, default=str))
    return result


if __name__ == "__main__":
    main()
