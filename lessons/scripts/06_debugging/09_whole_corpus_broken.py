"""Slow (f4): every rank reads the whole corpus, and trains on all of it.

    mpiexec -n 2 python 09_whole_corpus_broken.py
    python 09_whole_corpus_broken.py               # one process, for comparison

scatter_dataset was forgotten: each rank builds the whole corpus and iterates over all of it.
An epoch then takes as many steps as on one process (each a little slower, for the allreduce),
and every sentence is seen once per rank per epoch: no speed-up at all.
"""
import time

import chainer
import numpy as np

from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel import create_communicator, create_multi_node_optimizer

comm = create_communicator("ring")
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
seconds = time.perf_counter() - start
if comm.rank == 0:
    print(f"one epoch: {steps} steps of 32 sentences per rank, {seconds:.1f} s "
          f"({len(corpus.train) / seconds:.0f} corpus sentences/s)")
