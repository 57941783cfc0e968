"""What a synchronous step costs on this machine by itself: the floor under "of ceiling".

    dlhack bench floor --ranks 2 --step-ms 38   # starts the ranks (or: mpiexec -n 2 python -m
                                                # dlhack.bench.sync_floor --step-ms 38)
    dlhack bench scaling --floor                # in every repeat, beside each k-rank run

``dlhack bench scaling`` divides a k-rank run's throughput by k processes training alone side by
side (the ceiling). A synchronous step ends when its slowest rank ends, so even with equal work
and nothing to send, every jitter of any core (another process's time slice, a neighbour on the
host, the cache) makes the others wait, where processes alone each pay only their own. How much
that costs depends on the machine, not on the training code, so this measures it apart.

Every rank multiplies the same matrices into the same output array (no allocation, no data,
nothing to send) for a step of about ``--step-ms``. In blocks of ``--steps`` steps, alternating,
the ranks meet at a barrier after every step, as synchronous data parallelism does, or never,
as the ceiling's processes run. Each pair of blocks gives one ratio: the ranks' summed steps per
second with the barrier over without. The least a synchronous step can cost here, then: a
k-rank run's "of ceiling" that reaches it has nothing left to remove but the machine's jitter,
and the gap below it is what the training step adds (communication, and work that differs
between ranks). One thing can beat it: where a core runs slower than another for long, equal
work is the wrong split (``dlhack train --balance-speed`` gives that rank less).

Costs: ``2 x blocks x steps`` steps of about ``step_ms``, after a few to size the step. Rank 0
writes the JSON.
"""
import argparse
import json
import statistics
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from dlhack.atomic import write_json
from dlhack.bench.roofline import sgemm_seconds
from dlhack.jobs.mpiexec import launched_rank, mpiexec_command

SHAPE = (128, 512, 1024)  # (m, k, n): one product, about the size of the translator's


def products(step_ms, comm, shape=SHAPE):
    """``(work, count)``: ``work()`` runs ``count`` products, about ``step_ms`` of this
    core's time; every rank runs rank 0's count (the same work everywhere)."""
    m, k, n = shape
    rng = np.random.default_rng(comm.rank)
    a, b = rng.random((m, k), np.float32), rng.random((k, n), np.float32)
    out = np.empty((m, n), np.float32)
    count = comm.bcast(max(1, round(step_ms / 1000 / sgemm_seconds(1, m, k, n))))

    def work():
        for _ in range(count):
            np.matmul(a, b, out=out)
    return work, count


def block(work, steps, comm, synchronous):
    """``(steps per second, waits)`` of this rank over one block: with ``synchronous``, a
    barrier after every step (``waits``: the seconds each one took)."""
    waits = []
    comm.Barrier()
    start = time.perf_counter()
    for _ in range(steps):
        work()
        if synchronous:
            before = time.perf_counter()
            comm.Barrier()
            waits.append(time.perf_counter() - before)
    return steps / (time.perf_counter() - start), waits


def ratios(synchronous, alone):
    """Each pair of blocks' ratio: ``synchronous[i]`` and ``alone[i]`` hold every rank's steps
    per second in block ``i``; the ranks' sum with the barrier over their sum without."""
    return [sum(s) / sum(a) for s, a in zip(synchronous, alone, strict=True)]


def measure(work, steps, blocks, comm):
    """The floor of ``work`` (one step, ``products``), on every rank: ``{"of_alone_blocks",
    "of_alone", "step_ms", "wait_ms", "wait_median_ms"}`` (waits per rank, at the barrier of a
    synchronous step)."""
    work()  # warm: the first products of a process are slower
    rates = {True: [], False: []}
    waits = []
    for i in range(blocks):
        for synchronous in ((True, False) if i % 2 == 0 else (False, True)):
            rate, waited = block(work, steps, comm, synchronous)
            rates[synchronous].append(comm.allgather(rate))
            waits += waited
    each = ratios(rates[True], rates[False])
    alone_rate = statistics.mean(r for block_rates in rates[False] for r in block_rates)
    per_rank = comm.allgather((1000 * statistics.mean(waits), 1000 * statistics.median(waits)))
    return {"of_alone_blocks": each, "of_alone": statistics.median(each),
            "step_ms": 1000 / alone_rate,
            "wait_ms": [w for w, _ in per_rank], "wait_median_ms": [m for _, m in per_rank]}


def describe(floor, ranks):
    """One line of ``measure``'s result."""
    each = ", ".join(f"{x:.3f}" for x in floor["of_alone_blocks"])
    waits = ", ".join(f"{w:.2f} ({m:.2f})" for w, m in zip(floor["wait_ms"],
                                                             floor["wait_median_ms"]))
    return (f"{ranks} processes, equal matrix products in steps of {floor['step_ms']:.1f} ms: "
            f"with a barrier after each step, {floor['of_alone']:.3f} of their speed without "
            f"(per pair of blocks: {each}); wait per step, mean (median step): {waits} ms")


def report(floors, of_ceiling, ranks):
    """Print the repeats' ``floors`` (``measure``'s results) for ``ranks`` processes beside the
    k-rank run's median "of ceiling" (None: no ceiling ran); returns what the JSON keeps."""
    each = [floor["of_alone"] for floor in floors]
    run = "" if of_ceiling is None else f"; the {ranks}-rank run: {of_ceiling:.3f} of its ceiling"
    print(f"\n{ranks} processes' floor (equal matrix products, a barrier after every step): "
          f"{statistics.median(each):.3f} of their speed without (per repeat: "
          f"{', '.join(f'{x:.3f}' for x in each)}){run}")
    return {"of_alone": statistics.median(each), "of_alone_repeats": each, "repeats": floors}


def run(ranks, step_ms, out, threads=1, steps=40, blocks=4):
    """``measure``'s result for ``ranks`` processes under this package's mpiexec (one BLAS
    thread each, or ``threads``), written to ``out`` (a JSON file), read back and printed."""
    cmd, env = mpiexec_command(ranks, [
        sys.executable, "-m", "dlhack.bench.sync_floor", "--step-ms", f"{step_ms:.2f}",
        "--steps", str(steps), "--blocks", str(blocks), "--out", str(out)], threads=threads)
    subprocess.run(cmd, env=env, check=True, stdout=subprocess.DEVNULL)
    floor = json.loads(Path(out).read_text())
    print(describe(floor, ranks), flush=True)
    return floor


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack bench floor", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--ranks", type=int, default=2,
                   help="processes, when started without mpiexec (it starts them)")
    p.add_argument("--step-ms", type=float, default=40.0, help="the length of a step")
    p.add_argument("--steps", type=int, default=40, help="steps per block")
    p.add_argument("--blocks", type=int, default=4, help="blocks of each kind")
    p.add_argument("-o", "--out", help="write the result here as JSON (rank 0)")
    args = p.parse_args(argv)
    if launched_rank() is None:  # dlhack bench floor: start the ranks
        run(args.ranks, args.step_ms, args.out or "result/bench/floor.json",
            steps=args.steps, blocks=args.blocks)
        return 0
    from mpi4py import MPI

    comm = MPI.COMM_WORLD
    work, count = products(args.step_ms, comm)
    floor = {**measure(work, args.steps, args.blocks, comm), "products": count}
    if comm.rank == 0:
        print(describe(floor, comm.size), flush=True)
        if args.out:
            write_json(args.out, floor)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
