"""Slow (f4): every rank reads the whole corpus, and trains on all of it.

    mpiexec -n 2 python 09_whole_corpus_broken.py    # one process beside 2 ranks

scatter_dataset was forgotten: each rank builds the whole corpus and iterates over all of it.
An epoch then takes as many steps as on one process (each a little slower, for the allreduce),
and every sentence is seen once per rank per epoch: no speed-up at all.
"""
import time

import chainer
import numpy as np
from profiled import compare

from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel import create_communicator, create_multi_node_optimizer

UNIT = "corpus sentences/s"


def work(comm):
    corpus = default_corpus(seed=0, n_train=640, n_dev=1, n_test=1)  # BUG: on every rank...
    train = corpus.train  # BUG: ...and all of it, on every rank
    np.random.seed(0)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=128, n_layers=2)
    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
    optimizer.setup(model)

    start, steps = time.perf_counter(), 0
    for batch in BucketIterator(train, 32, repeat=False):  # one epoch
        optimizer.update(model, **convert(batch))
        steps += 1
    return len(corpus.train), time.perf_counter() - start, (
        f"one epoch: {steps} steps of 32 sentences a rank, "
        f"{steps * 32 * comm.size} sentences trained on")


if __name__ == "__main__":
    compare(create_communicator("ring"), {"broken": work}, unit=UNIT)
