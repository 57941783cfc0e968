"""Time each allreduce algorithm on float32 messages and report its bandwidth.

    mpiexec -n 2 dlhack bench allreduce                # at the rank count mpiexec gives
    dlhack bench allreduce                             # launches mpiexec itself, at --ranks 2
    dlhack bench allreduce --ranks 1 2 --sizes 4K 1M 64M --algorithms ring mpi --repeat 20

For every message size: ``--warmup`` untimed rounds, then ``--repeat`` timed ones; a round
calls each algorithm once (so a burst of load from elsewhere hits them all alike), each call
after a barrier, on freshly written values. A call's time is the slowest rank's; the table
shows the median. Messages are summed in place, as ``multi_node_mean_grad`` does.

- algbw = bytes / time: how fast one rank's array got summed.
- busbw = algbw * 2 (p - 1) / p: the bytes each rank must move in an optimal allreduce, over
  time (the nccl-tests convention). It does not change with ``p`` for an ideal algorithm, so
  figures at different rank counts compare directly; it is 0 at one rank (nothing moves).
- copy: ``np.copyto`` of the same number of bytes, run on every rank at once: roughly the
  ceiling of what shared memory can do here, since every message is copied at least once.
- faults: minor page faults per call on the rank with the most (median): memory the call
  touched for the first time, fresh from the operating system. MPICH's in-place
  ``MPI_Allreduce`` takes a temporary buffer for a large message; glibc's ``malloc`` serves a
  large one by a new ``mmap`` each call, and every 4 KB page of it then faults once.

Rank 0 prints the table (and the MPI library's version) and writes ``--json``.
"""
import argparse
import functools
import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from dlhack import atomic
from dlhack.jobs import allocation
from dlhack.jobs.mpiexec import launched_rank, mpiexec_command

DEFAULT_SIZES = ["4K", "16K", "64K", "256K", "1M", "4M", "16M", "64M"]  # powers of 4
DEFAULT_JSON = "result/bench/allreduce.json"
ALGORITHMS = ("naive", "ring", "mpi", "chainermn")  # chainermn: its naive communicator
UNITS = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}


def parse_size(text):
    """``"4K"`` -> 4096, ``"64M"`` -> 67108864, ``"1000"`` -> 1000 (bytes)."""
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in UNITS:
        return int(float(text[:-1]) * UNITS[text[-1]])
    return int(text)


def human(nbytes):
    """4096 -> ``"4K"``."""
    for unit in ("G", "M", "K"):
        if nbytes >= UNITS[unit] and nbytes % UNITS[unit] == 0:
            return f"{nbytes // UNITS[unit]}{unit}"
    return str(nbytes)


def allreduce_function(name, mpi_comm):
    """``f(array)`` that sums ``array`` over ranks in place with algorithm ``name``."""
    if name == "chainermn":
        import chainermn

        comm = chainermn.create_communicator("naive", mpi_comm=mpi_comm)
        return lambda array: np.copyto(array, comm.allreduce(array))  # it returns a new array
    from dlhack.parallel.communicator import ALGORITHMS as OURS

    allreduce = OURS[name]
    return lambda array: allreduce(mpi_comm, array, out=array)


def time_once(mpi_comm, call, array):
    """``(seconds, page faults)`` of ``call(array)`` on the slowest and the most-faulting rank,
    timed from a common barrier."""
    from mpi4py import MPI

    mpi_comm.Barrier()
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    start = time.perf_counter()
    call(array)
    seconds = time.perf_counter() - start
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
    return (mpi_comm.allreduce(seconds, op=MPI.MAX), mpi_comm.allreduce(faults, op=MPI.MAX))


def run(args):
    """The benchmark at this job's rank count; returns the rows (every rank returns them)."""
    from mpi4py import MPI

    mpi_comm = MPI.COMM_WORLD.Dup()
    size = mpi_comm.size
    rows = []
    for nbytes in args.sizes:
        start = np.full(nbytes // 4, 1e-3, np.float32)
        array = np.empty_like(start)
        calls = {"copy": functools.partial(np.copyto, src=start)}  # copy(array): the ceiling
        calls.update({name: allreduce_function(name, mpi_comm) for name in args.algorithms})
        times = {name: [] for name in calls}
        # Round robin, one call of each algorithm per round: on a shared machine a burst of
        # load elsewhere then slows every algorithm alike instead of one of them.
        for i in range(args.warmup + args.repeat):
            for name, call in calls.items():
                # Freshly written values (as gradients are, just before their allreduce),
                # and no growth towards overflow over many repeats.
                np.copyto(array, start)
                seconds, faults = time_once(mpi_comm, call, array)
                if i >= args.warmup:
                    times[name].append((seconds, faults))
        for name, runs in times.items():
            seconds, faults = zip(*runs)
            rows.append(row(size, nbytes, name, float(np.median(seconds)), bus=name != "copy",
                            faults=int(np.median(faults))))
    mpi_comm.Free()
    return rows


def row(size, nbytes, algorithm, seconds, bus=True, faults=0):
    algbw = nbytes / seconds / 1e9
    return {"ranks": size, "bytes": nbytes, "algorithm": algorithm, "median_s": seconds,
            "algbw_GBps": algbw, "busbw_GBps": algbw * 2 * (size - 1) / size if bus else None,
            "page_faults": faults}


def table(rows):
    """The rows as text, with the ring/mpi ratio of algbw for each size."""
    header = (f"{'ranks':>5} {'size':>6} {'algorithm':>10} {'median ms':>10} "
              f"{'algbw GB/s':>11} {'busbw GB/s':>11} {'/ mpi':>6} {'faults':>7}")
    lines = [header]
    mpi = {(r["ranks"], r["bytes"]): r["median_s"] for r in rows if r["algorithm"] == "mpi"}
    for r in rows:
        busbw = "" if r["busbw_GBps"] is None else f"{r['busbw_GBps']:.2f}"
        ref = mpi.get((r["ranks"], r["bytes"]))
        ratio = f"{ref / r['median_s']:.2f}" if ref and r["algorithm"] != "copy" else ""
        lines.append(f"{r['ranks']:>5} {human(r['bytes']):>6} {r['algorithm']:>10} "
                     f"{r['median_s'] * 1e3:>10.3f} {r['algbw_GBps']:>11.2f} {busbw:>11} "
                     f"{ratio:>6} {r.get('page_faults', 0):>7}")
    return "\n".join(lines)


def write_json(path, rows, library, load_average=None):
    doc = {"mpi_library": library, "dtype": "float32", "load_average": load_average,
           "definitions": {"algbw": "bytes / median time",
                           "busbw": "algbw * 2 (p - 1) / p",
                           "copy": "np.copyto of the same bytes, every rank at once",
                           "page_faults": "median minor page faults per call, on the rank "
                                          "with the most",
                           "time": "median over repeats of the slowest rank's time"},
           "rows": rows}
    atomic.write_json(path, doc)


def mpi_library():
    from mpi4py import MPI

    return " ".join(MPI.Get_library_version().splitlines()[0].split())


def launch(args, argv):
    """Run this benchmark under mpiexec once per ``--ranks`` count; merge their JSON."""
    cores = allocation.cores()  # this job's, not the machine's
    counts = [p for p in args.ranks if p <= cores]
    for p in sorted(set(args.ranks) - set(counts)):
        print(f"skipping --ranks {p}: more ranks than the {cores} cores given would time the "
              f"scheduler")
    rows, library, loads = [], None, []
    with tempfile.TemporaryDirectory() as tmp:
        for p in counts:
            out = Path(tmp, f"{p}.json")
            cmd, env = mpiexec_command(p, [sys.executable, "-m", "dlhack.bench.allreduce",
                                           *argv, "--json", str(out)])
            subprocess.run(cmd, env=env, check=True)
            doc = json.loads(out.read_text())
            rows += doc["rows"]
            library = doc["mpi_library"]
            loads.append(doc["load_average"])
    if rows:
        write_json(args.json, rows, library, max(loads))
        print(f"wrote {args.json}")
    return 0


def parse_args(argv):
    parser = argparse.ArgumentParser(
        prog="dlhack bench allreduce",
        description="Time naive, ring and MPI allreduce on float32 messages (see the module "
                    "docstring for algbw/busbw).")
    parser.add_argument("-s", "--sizes", nargs="+", type=parse_size,
                        default=[parse_size(s) for s in DEFAULT_SIZES],
                        help="message sizes in bytes, with K/M/G suffixes (default: 4K..64M, "
                             "powers of 4)")
    parser.add_argument("-a", "--algorithms", nargs="+", choices=ALGORITHMS,
                        default=["naive", "ring", "mpi"],
                        help="which allreduce to time; chainermn: ChainerMN's naive "
                             "communicator (default: naive ring mpi)")
    parser.add_argument("-r", "--repeat", type=int, default=10,
                        help="timed calls per size and algorithm (default: 10)")
    parser.add_argument("-w", "--warmup", type=int, default=2,
                        help="untimed calls first (default: 2)")
    parser.add_argument("-n", "--ranks", nargs="+", type=int, default=[2],
                        help="rank counts to launch when not already under mpiexec; counts "
                             "above the number of cores are skipped (default: 2)")
    parser.add_argument("-j", "--json", default=DEFAULT_JSON,
                        help=f"where to write the figures (default: {DEFAULT_JSON})")
    return parser.parse_args(argv)


def main(argv=None):
    """``dlhack bench allreduce``: see the module docstring."""
    argv = list(sys.argv[1:] if argv is None else argv)
    args = parse_args(argv)
    if launched_rank() is None:
        # Not under mpiexec: start one job per rank count, passing our flags on.
        return launch(args, strip_options(argv, ("-n", "--ranks", "-j", "--json")))

    from mpi4py import MPI

    load_before = os.getloadavg()[0]
    rows = run(args)
    if MPI.COMM_WORLD.rank == 0:  # the one place this benchmark prints and writes
        print(f"MPI library: {mpi_library()}")
        print(f"ranks: {MPI.COMM_WORLD.size}, float32, median of {args.repeat}, "
              f"OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'unset')}, "
              f"load average {load_before:.1f} on {os.cpu_count()} cores")
        if load_before > (os.cpu_count() or 1):  # the load is the machine's: so is the count
            # Every Sendrecv needs both ranks on a core at once; on a busy machine they wait
            # for the scheduler, and the figures measure that instead of the algorithms.
            print("warning: more runnable processes than cores; rerun on a quiet machine")
        print(table(rows), flush=True)
        write_json(args.json, rows, mpi_library(), load_before)
    return 0


def strip_options(argv, names):
    """``argv`` without the options in ``names`` and the values that follow each."""
    kept, skipping = [], False
    for arg in argv:
        if arg.startswith("-") and not arg.lstrip("-").replace(".", "").isdigit():
            skipping = arg.split("=")[0] in names
            if skipping:
                continue
        if not skipping:
            kept.append(arg)
    return kept


if __name__ == "__main__":
    sys.exit(main())
