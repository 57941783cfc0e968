"""Slow (f1): every rank runs as many BLAS threads as the machine has cores.

    env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS mpiexec -n 2 python 06_threads_broken.py

With OMP_NUM_THREADS (and OPENBLAS_NUM_THREADS) unset, OpenBLAS starts one thread per core in
*every* rank: 2 ranks on 2 cores run 4 threads, which take turns on the cores and spin while
they wait for each other. Run on its own, it sets 2 ranks beside one process (profiled.py).
"""
import os

from profiled import compare, train_steps

from dlhack.parallel import create_communicator

CORES = len(os.sched_getaffinity(0))


def work(comm):
    summary, sentences, seconds = train_steps(comm, 32)  # BUG: nothing limits the BLAS threads
    threads = max(r["threads"] for r in summary["ranks"])
    return sentences, seconds, f"{comm.size} x {threads} BLAS threads on {CORES} cores"


if __name__ == "__main__":
    compare(create_communicator("ring"), {"broken": work})
