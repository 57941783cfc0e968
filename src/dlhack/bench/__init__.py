"""Benchmarks: commands that print figures and write JSON (never tests that assert a time).

    dlhack bench model       # the step against the sgemm rate: readable, fused, NStepLSTM, official
    dlhack bench corpus      # train on small_parallel_enja, report test BLEU
    dlhack bench allreduce   # time and bandwidth of each allreduce algorithm
    dlhack bench scaling     # throughput at 1..N ranks, weak-scaling efficiency, breakdown
    dlhack bench balance     # why ranks wait: uneven work per step, or a jittery core
    dlhack bench floor       # what a barrier after every step costs equal work on this machine
    dlhack bench grade       # how long a check cell and a whole lab take to grade
"""
import importlib
import sys

BENCHES = {
    "model": "dlhack.bench.model",
    "corpus": "dlhack.bench.corpus",
    "allreduce": "dlhack.bench.allreduce",
    "scaling": "dlhack.bench.scaling",
    "balance": "dlhack.bench.balance",
    "floor": "dlhack.bench.sync_floor",
    "grade": "dlhack.bench.grade",
}


def main(argv=None):
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or argv[0] not in BENCHES:
        print("usage: dlhack bench {" + ",".join(BENCHES) + "} [ARGS...]")
        return 0 if not argv or argv[0] in ("-h", "--help") else 2
    return importlib.import_module(BENCHES[argv[0]]).main(argv[1:]) or 0
