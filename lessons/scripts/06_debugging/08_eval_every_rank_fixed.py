"""Fix (f3): each rank translates its shard; the hypotheses are gathered and scored once.

    mpiexec -n 2 python 08_eval_every_rank_fixed.py

This is what ``bleu_of(..., comm)`` and ``BleuEvaluator`` do in dlhack.train. (Evaluating on
rank 0 alone is no better: the other ranks wait for it at the next allreduce.)
"""
import time

import numpy as np

from dlhack.corpus import default_corpus
from dlhack.evaluation import bleu_of
from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator, scatter_index

comm = create_communicator("ring")
corpus = default_corpus(seed=0, n_train=200, n_dev=96, n_test=1)
dev = list(zip(corpus.dev, (tgt for _, tgt in corpus.raw["dev"])))  # ((src, tgt), reference)
np.random.seed(0)
model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=128, n_layers=2)

start = time.perf_counter()
mine = [dev[i] for i in scatter_index(len(dev), comm)]  # FIX: this rank's share
bleu = bleu_of(model, mine, corpus.tgt_vocab, comm, max_length=20)  # gathered, scored once
seconds = comm.gather_obj((len(mine), time.perf_counter() - start))
if comm.rank == 0:
    print(f"BLEU {bleu:.2f}; sentences translated per rank: {[n for n, _ in seconds]}")
    print(f"evaluation took {max(s for _, s in seconds):.2f} s")
