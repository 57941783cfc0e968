"""Slow (f3): every rank evaluates the whole dev set.

    mpiexec -n 2 python 08_eval_every_rank_broken.py

Each rank translates all 96 dev sentences and scores them: the same BLEU, computed twice, in the
time one process takes. Evaluation does not get faster with more ranks, and inside a training
loop the ranks spend that time together, every time the evaluation runs.
"""
import time

import numpy as np

from dlhack.corpus import default_corpus
from dlhack.evaluation import bleu_of
from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator

comm = create_communicator("ring")
corpus = default_corpus(seed=0, n_train=200, n_dev=96, n_test=1)
dev = list(zip(corpus.dev, (tgt for _, tgt in corpus.raw["dev"])))  # ((src, tgt), reference)
np.random.seed(0)
model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=128, n_layers=2)

start = time.perf_counter()
bleu = bleu_of(model, dev, corpus.tgt_vocab, max_length=20)  # BUG: all of dev, on every rank
seconds = comm.gather_obj((len(dev), time.perf_counter() - start))
if comm.rank == 0:
    print(f"BLEU {bleu:.2f}; sentences translated per rank: {[n for n, _ in seconds]}")
    print(f"evaluation took {max(s for _, s in seconds):.2f} s")
