"""Slow (f2): a tiny batch per rank.

    mpiexec -n 2 python 07_tiny_batch_broken.py    # one process beside 2 ranks (profiled.py)

The one-process recipe used a batch of 4; here it is divided among the ranks, so each rank
computes 2 sentences per step. What a step costs whatever its batch (the allreduce of the whole
gradient, the optimizer's update of every weight, Python's and Chainer's overhead) is then most
of the step. On one machine the allreduce goes through shared memory; the second row sends it
over a simulated 100 Mb/s network instead (dlhack.parallel.slowlink), as between two nodes.
"""
from functools import partial

from profiled import compare, step_note, train_steps

from dlhack.parallel import create_communicator
from dlhack.parallel.slowlink import SlowLink

GLOBAL_BATCH = 4  # the one-process recipe's
# 100 Mb/s Ethernet: 50 us a message, 12.5 MB/s; every allreduce of the gradient pays it.
ROWS = {"100 Mb/s link": {"link": partial(SlowLink, alpha=50e-6, beta=1 / 12.5e6)}}


def work(comm, link=None):
    batchsize = GLOBAL_BATCH // comm.size  # BUG: the per-rank batch shrinks as ranks are added
    summary, sentences, seconds = train_steps(comm, batchsize, link=link)
    return sentences, seconds, step_note(summary, batchsize)


if __name__ == "__main__":
    compare(create_communicator("ring"), {"broken": work}, ROWS)
