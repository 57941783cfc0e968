"""Single-process training throughput and peak memory: our LSTM vs Chainer's NStepLSTM.

    dlhack bench model                       # demo model and 256 units x 3 layers, batch 64
    dlhack bench model --corpus ../shared/data/small_parallel_enja --repeats 3

Each measurement runs in a fresh process (so its peak memory is its own), on the same batches,
and the two formulations alternate, repeat after repeat: on a noisy machine the ratio measured
side by side means more than either figure alone. Prints which BLAS kernel numpy ran.
"""
import argparse
import json
import resource
import statistics
import subprocess
import sys
import time

from dlhack.atomic import write_json
from dlhack.jobs.mpiexec import one_thread_env

CONFIGS = [("demo", 128, 2), ("256x3", 256, 3)]


def blas_info():
    """What BLAS numpy runs: library, kernel (core type) and threads."""
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return [{k: i.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
            for i in blas]


def worker(impl, units, layers, batchsize, iterations, corpus, seed=0):
    """Train ``iterations`` steps after 2 warm-up steps; return sentences/s and memory."""
    import chainer
    import numpy as np

    from dlhack.corpus import default_corpus, load_corpus
    from dlhack.model.seq2seq import Seq2seq

    data = load_corpus(corpus) if corpus else default_corpus(seed=seed)
    rng = np.random.RandomState(seed)  # the same batches for every formulation
    batches = [[data.train[i] for i in rng.choice(len(data.train), batchsize, replace=False)]
               for _ in range(iterations + 2)]
    np.random.seed(seed)
    model = Seq2seq(len(data.src_vocab), len(data.tgt_vocab), n_units=units, n_layers=layers,
                    dropout=0.1, impl=impl)
    optimizer = chainer.optimizers.Adam()
    optimizer.setup(model)
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    for k, batch in enumerate(batches):
        if k == 2:
            start = time.perf_counter()
        optimizer.update(model, [x for x, _ in batch], [y for _, y in batch])
    seconds = time.perf_counter() - start
    return {"blas": blas_info(), "sentences_per_sec": iterations * batchsize / seconds,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
            "rss_before_training_mb": rss_before}


def measure(impl, units, layers, args):
    """Run one worker process and return its figures."""
    cmd = [sys.executable, "-m", "dlhack.bench.model", "--worker", impl, str(units),
           str(layers), "--batchsize", str(args.batchsize), "--iterations",
           str(args.iterations)] + (["--corpus", args.corpus] if args.corpus else [])
    # One BLAS thread, as every course job: the ratio compares formulations, not thread pools.
    out = subprocess.run(cmd, env=one_thread_env(), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack bench model", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-c", "--corpus", help="corpus directory (default: embedded corpus)")
    p.add_argument("-b", "--batchsize", type=int, default=64)
    p.add_argument("-i", "--iterations", type=int, default=10, help="timed steps per run")
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("--json", default="result/bench/model.json")
    p.add_argument("--worker", nargs=3, metavar=("IMPL", "UNITS", "LAYERS"),
                   help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        impl, units, layers = args.worker[0], int(args.worker[1]), int(args.worker[2])
        print(json.dumps(worker(impl, units, layers, args.batchsize, args.iterations,
                                args.corpus)))
        return 0

    print(f"corpus: {args.corpus or 'embedded'}, batch {args.batchsize}, "
          f"{args.iterations} timed steps x {args.repeats} repeats, alternating")
    results = {}
    for name, units, layers in CONFIGS:
        runs = {"fast": [], "nstep": []}
        for _ in range(args.repeats):
            for impl, figures in runs.items():
                figures.append(measure(impl, units, layers, args))
                if name == CONFIGS[0][0] and len(figures) == 1 and impl == "fast":
                    print(f"BLAS in the workers: {figures[0]['blas']}")
        ratios = [f["sentences_per_sec"] / n["sentences_per_sec"]
                  for f, n in zip(runs["fast"], runs["nstep"])]
        results[name] = {"units": units, "layers": layers, "runs": runs,
                         "ratio_median": statistics.median(ratios), "ratios": ratios}
        for impl, rs in runs.items():
            print(f"{name:>6} {impl:>5}: "
                  f"{statistics.median(r['sentences_per_sec'] for r in rs):7.1f} sentences/s, "
                  f"peak RSS {max(r['peak_rss_mb'] for r in rs):7.0f} MB "
                  f"({max(r['peak_rss_mb'] - r['rss_before_training_mb'] for r in rs):.0f} MB "
                  f"for training)")
        print(f"{name:>6} fast/nstep throughput ratio: median {statistics.median(ratios):.2f} "
              f"(runs: {', '.join(f'{r:.2f}' for r in ratios)})")
    write_json(args.json, {"batchsize": args.batchsize,
                           "corpus": args.corpus or "embedded", "results": results})
    print(f"wrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
