"""Fix (f2): keep the batch per rank large enough (the global batch grows with the ranks).

    mpiexec -n 2 python 07_tiny_batch_fixed.py

A larger global batch takes fewer, larger steps: raise the learning rate with it (the linear
scaling rule, with a warm-up) and check the dev BLEU, as lesson 5 does.
"""
from functools import partial

from profiled import compare, step_note, train_steps

from dlhack.parallel import create_communicator
from dlhack.parallel.slowlink import SlowLink

GLOBAL_BATCH = 4  # the one-process recipe's
# 100 Mb/s Ethernet: 50 us a message, 12.5 MB/s; every allreduce of the gradient pays it.
ROWS = {"100 Mb/s link": {"link": partial(SlowLink, alpha=50e-6, beta=1 / 12.5e6)}}


def work(comm, link=None):
    batchsize = 32  # FIX: per rank; the global batch is 32 x ranks
    summary, sentences, seconds = train_steps(comm, batchsize, link=link)
    return sentences, seconds, step_note(summary, batchsize)


if __name__ == "__main__":
    compare(create_communicator("ring"), {"fixed": work}, ROWS)
