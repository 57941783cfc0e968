"""Fix (f1): each rank takes its share of the node's cores (cores / ranks per node threads).

    env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS mpiexec -n 2 python 06_threads_fixed.py

The launch line can say it instead: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpiexec ...``.
One process alone keeps every core, as it would on its own.
"""
import os

from profiled import compare, train_steps
from threadpoolctl import threadpool_limits

from dlhack.parallel import create_communicator

CORES = len(os.sched_getaffinity(0))


def work(comm):
    with threadpool_limits(max(1, CORES // comm.intra_size)):  # FIX: share the node's cores
        summary, sentences, seconds = train_steps(comm, 32)
    threads = max(r["threads"] for r in summary["ranks"])
    return sentences, seconds, f"{comm.size} x {threads} BLAS threads on {CORES} cores"


if __name__ == "__main__":
    compare(create_communicator("ring"), {"fixed": work})
