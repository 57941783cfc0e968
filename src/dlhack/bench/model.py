"""One process's training step against this core's limit: throughput, fraction of the sgemm
rate, where the step goes, and peak memory, for each formulation of the translator.

    dlhack bench model                       # demo and 256 x 3, batch 64, with and without attention
    dlhack bench model --official CHECKOUT/examples/seq2seq/seq2seq.py --attention off
    dlhack bench model --impls readable fused nstep --repeats 5 --clock cpu

Formulations: ``readable`` is ``Seq2seq`` with Chainer's Adam (what lessons show), ``fused`` is
``FusedSeq2seq`` with ``PackedAdam`` (``dlhack.model.fused``), its elementwise work compiled
where a C compiler is (``dlhack.model.ckernels``; the table says which ran), ``fused-numpy`` the
same forced onto numpy's elementwise path, ``nstep`` is ``Seq2seq`` on
Chainer's NStepLSTM, ``official`` is Chainer 7.8.1's own example (``dlhack.bench.official``;
without attention only, and only given its path). Each run is a fresh process (its peak memory
is its own), the order of formulations turning every repeat, so the ratios printed are measured
side by side. Ours train on the bucketed batches our training draws (``BucketIterator``); the
example on the shuffled batches its own trainer draws (``SerialIterator``), or on ours with
``--official-batches ours``. A run times ``--iterations`` steps
after two warm-up steps, then the same steps again with the ``GemmMeter`` on (which products
ran, and how long they took), then replays those product shapes alone: the sgemm rate. Fraction
of the sgemm rate = useful FLOPs (``dlhack.bench.flops``, real tokens only) / step time / rate.
The table by phase splits each step three ways: the products as long as the replay took them
("GEMM hot"), what they lost inside the step against that ("lost"), and everything else.
Peak memory is the process's peak resident set; training memory is that less the resident set
before the model was made (interpreter, numpy, Chainer and the corpus: the same for every row).
``--clock cpu`` times with the process's CPU time: on a machine shared with other jobs, time
slices lost to them then count for nobody.
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
IMPLS = ("readable", "fused", "fused-numpy", "nstep", "official")


def blas_info():
    """What BLAS numpy runs: library, kernel (core type) and threads."""
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return [{k: i.get(k) for k in ("internal_api", "architecture", "num_threads", "version")}
            for i in blas]


def build(impl, units, layers, attention, data, official):
    """``(model, optimizer)`` for one formulation, on numpy's seed 0."""
    import chainer
    import numpy as np

    from dlhack.model.fused import FusedSeq2seq
    from dlhack.model.packed_adam import PackedAdam
    from dlhack.model.seq2seq import Seq2seq

    np.random.seed(0)
    sizes = (len(data.src_vocab), len(data.tgt_vocab))
    if impl == "official":
        from dlhack.bench.official import official_model

        model = official_model(official, layers, *sizes, units)
    else:
        cls = FusedSeq2seq if impl.startswith("fused") else Seq2seq
        model = cls(*sizes, n_units=units, n_layers=layers, dropout=0.1, attention=attention,
                    impl="nstep" if impl == "nstep" else "fast")
    optimizer = PackedAdam() if impl.startswith("fused") else chainer.optimizers.Adam()
    return model, optimizer.setup(model)


def worker(impl, units, layers, attention, args):
    """Train, meter and replay as the module docstring says; return the figures."""
    import numpy as np
    from chainer.iterators import SerialIterator

    from dlhack.bench import roofline
    from dlhack.bench.flops import count_flops
    from dlhack.corpus import default_corpus, load_corpus
    from dlhack.corpus.batching import BucketIterator
    from dlhack.model.ckernels import describe

    timer = time.process_time if args.clock == "cpu" else time.perf_counter
    data = load_corpus(args.corpus) if args.corpus else default_corpus(seed=0)
    it = BucketIterator(data.train, args.batchsize, seed=0)  # the batches our training draws
    if impl == "official" and args.official_batches == "own":
        np.random.seed(0)  # the example's own: SerialIterator, shuffled, lengths mixed
        it = SerialIterator(data.train, args.batchsize, shuffle=True)
    batches = [it.next() for _ in range(args.iterations + 2)]
    rss_before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    model, optimizer = build(impl, units, layers, attention, data, args.official)
    roofline.timed_steps(model, optimizer, batches[:2])  # warm-up: allocations, first shapes
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    _, clock = roofline.timed_steps(model, optimizer, batches[2:], timer=timer)
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    meter, metered = roofline.timed_steps(model, optimizer, batches[2:], True, timer)
    replayed = roofline.replay_seconds(meter.shapes(), timer=timer)
    seconds = sum(clock.steps)
    counts = [count_flops(units, layers, len(data.tgt_vocab), attention,
                          [len(x) for x, _ in b], [len(y) for _, y in b]) for b in batches[2:]]
    return {"impl": impl, "units": units, "layers": layers, "attention": attention,
            "blas": roofline.blas_kernel(), "clock": args.clock, "seconds": seconds,
            "elementwise": describe() if impl.startswith("fused") else "numpy (Chainer's)",
            "step_seconds": clock.steps,
            "sentences_per_sec": sum(len(b) for b in batches[2:]) / seconds,
            "useful_flops": sum(c.useful_total for c in counts),
            "padded_flops": sum(c.padded_total for c in counts),
            "executed_flops": meter.flops(),
            "sgemm_rate": roofline.sgemm_rate(meter.shapes(), replayed=replayed),
            "phases": roofline.phase_table(metered, meter, len(batches) - 2, replayed),
            "page_faults_per_step": faults / (len(batches) - 2),
            "peak_rss_mb": peak, "rss_before_training_mb": rss_before,
            "gemm_in_step_rate": meter.flops() / max(meter.seconds(), 1e-9)}


def measure(impl, units, layers, attention, args):
    """Run one worker process and return its figures."""
    cmd = [sys.executable, "-m", "dlhack.bench.model", "--worker", impl, str(units),
           str(layers), str(int(attention)), "--batchsize", str(args.batchsize),
           "--iterations", str(args.iterations), "--clock", args.clock]
    cmd += ["--corpus", args.corpus] if args.corpus else []
    cmd += ["--official", args.official, "--official-batches", args.official_batches] \
        if args.official else []
    # one BLAS thread in the worker, whatever this shell asked for
    force = {"DLHACK_KERNELS": "numpy"} if impl == "fused-numpy" else {}
    out = subprocess.run(cmd, env=one_thread_env(**force), check=True, capture_output=True,
                         text=True).stdout
    return json.loads(out.strip().splitlines()[-1])


def fraction(run):
    """Useful FLOP/s over the sgemm rate at the shapes that run executed."""
    return run["useful_flops"] / run["seconds"] / run["sgemm_rate"]


def ratio(x, y):
    """``x / y``, or nan where ``y`` is 0."""
    return x / y if y else float("nan")


def report(name, runs):
    """Print one configuration's table: medians over repeats, ratios paired by repeat."""
    from dlhack.bench.roofline import format_phases

    for rs in runs.values():
        for r in rs:
            r["training_mb"] = r["peak_rss_mb"] - r["rss_before_training_mb"]
    med = {impl: {k: statistics.median(r[k] for r in rs) for k in
                  ("sentences_per_sec", "peak_rss_mb", "training_mb", "sgemm_rate",
                   "page_faults_per_step")} for impl, rs in runs.items()}
    print(f"\n{name}: {'':>9} {'sent/s':>8} {'useful GF/s':>11} {'executed':>9} "
          f"{'sgemm GF/s':>10} {'of sgemm':>8} {'peak MB':>8} {'training MB':>11} "
          f"{'faults/step':>11}")
    for impl, rs in runs.items():
        gf = statistics.median(r["useful_flops"] / r["seconds"] / 1e9 for r in rs)
        ex = statistics.median(r["executed_flops"] / r["seconds"] / 1e9 for r in rs)
        fr = [fraction(r) for r in rs]
        print(f"{'':>{len(name) + 1}} {impl:>10} {med[impl]['sentences_per_sec']:>8.1f} "
              f"{gf:>11.1f} {ex:>9.1f} {med[impl]['sgemm_rate'] / 1e9:>10.1f} "
              f"{statistics.median(fr):>8.3f} {med[impl]['peak_rss_mb']:>8.0f} "
              f"{med[impl]['training_mb']:>11.0f} "
              f"{med[impl]['page_faults_per_step']:>11.0f}   (of sgemm per repeat: "
              f"{', '.join(f'{f:.3f}' for f in fr)})")
    impls = list(runs)
    for a in impls:
        for b in impls:
            if a == "fused" and b != a or a == "readable" and b in ("nstep", "official"):
                speed = [x["sentences_per_sec"] / y["sentences_per_sec"]
                         for x, y in zip(runs[a], runs[b])]
                mem = [ratio(x["peak_rss_mb"], y["peak_rss_mb"]) for x, y in zip(runs[a], runs[b])]
                # a run too short to grow its memory measurably has no training memory to divide by
                own = [ratio(x["training_mb"], y["training_mb"]) for x, y in zip(runs[a], runs[b])]
                print(f"  {a}/{b}: throughput x{statistics.median(speed):.2f} "
                      f"({', '.join(f'{s:.2f}' for s in speed)}), peak memory "
                      f"x{statistics.median(mem):.2f}, training memory "
                      f"x{statistics.median(own):.2f}")
    for impl, rs in runs.items():
        typical = sorted(rs, key=lambda r: r["sentences_per_sec"])[len(rs) // 2]
        print(f"  {impl}, ms per step by phase (GEMM: the products, metered; GEMM hot: the same "
              f"products at the sgemm rate; lost: the difference; other: Chainer, elementwise "
              f"work, Python); elementwise: {typical.get('elementwise')}")
        print("\n".join("    " + line for line in format_phases(typical["phases"])))


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack bench model", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-c", "--corpus", help="corpus directory (default: embedded corpus)")
    p.add_argument("-b", "--batchsize", type=int, default=64)
    p.add_argument("-i", "--iterations", type=int, default=10, help="timed steps per run")
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("-s", "--sizes", nargs="+", default=[n for n, _, _ in CONFIGS],
                   choices=[n for n, _, _ in CONFIGS])
    p.add_argument("-a", "--attention", choices=["off", "on", "both"], default="both")
    p.add_argument("--impls", nargs="+", choices=IMPLS, default=["readable", "fused"])
    p.add_argument("--official", metavar="PATH", help="Chainer 7.8.1's "
                   "examples/seq2seq/seq2seq.py: adds the 'official' row (no attention)")
    p.add_argument("--official-batches", choices=["own", "ours"], default="own",
                   help="the example's own random batches (as its trainer draws them), or our "
                        "bucketed ones")
    p.add_argument("--clock", choices=["wall", "cpu"], default="wall",
                   help="time steps and sgemm by wall clock or by this process's CPU time")
    p.add_argument("--json", default="result/bench/model.json")
    p.add_argument("--worker", nargs=4, help=argparse.SUPPRESS)
    args = p.parse_args(argv)
    if args.worker:
        impl, units, layers, attention = args.worker
        print(json.dumps(worker(impl, int(units), int(layers), attention == "1", args)))
        return 0
    impls = [i for i in args.impls if i != "official"] + (["official"] if args.official else [])
    print(f"corpus: {args.corpus or 'embedded'}, batch {args.batchsize}, bucketed; "
          f"{args.iterations} timed steps x {args.repeats} repeats, turning order; "
          f"clock: {args.clock}")
    attentions = {"off": [False], "on": [True], "both": [False, True]}[args.attention]
    results = {}
    for name, units, layers in [c for c in CONFIGS if c[0] in args.sizes]:
        for attention in attentions:
            here = [i for i in impls if not (attention and i == "official")]
            runs = {impl: [] for impl in here}
            for repeat in range(args.repeats):
                turn = repeat % len(here)
                for impl in here[turn:] + here[:turn]:
                    runs[impl].append(measure(impl, units, layers, attention, args))
            key = f"{name}{' attention' if attention else ''}"
            if not results:
                print(f"BLAS in the workers: {runs[here[0]][0]['blas']}")
            report(key, runs)
            results[key] = runs
    write_json(args.json, {"args": vars(args), "blas": blas_info(), "results": results})
    print(f"\nwrote {args.json}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
