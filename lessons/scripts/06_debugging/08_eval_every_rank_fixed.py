"""Fix (f3): each rank translates its shard; the hypotheses are gathered and scored once.

    mpiexec -n 2 python 08_eval_every_rank_fixed.py

This is what ``bleu_of(..., comm)`` and ``BleuEvaluator`` do in dlhack.train. (Evaluating on
rank 0 alone is no better: the other ranks wait for it at the next allreduce.)
"""
import time

import numpy as np
from profiled import compare

from dlhack.corpus import default_corpus
from dlhack.evaluation import bleu_of
from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator, scatter_index

UNIT = "dev sentences/s"
corpus = default_corpus(seed=0, n_train=200, n_dev=192, n_test=1)
dev = list(zip(corpus.dev, (tgt for _, tgt in corpus.raw["dev"])))  # ((src, tgt), reference)
np.random.seed(0)
model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=128, n_layers=2)


def work(comm):
    start = time.perf_counter()
    mine = [dev[i] for i in scatter_index(len(dev), comm)]  # FIX: this rank's share
    bleu = bleu_of(model, mine, corpus.tgt_vocab, comm, max_length=20)  # gathered, scored once
    counts = comm.gather_obj((len(mine), time.perf_counter() - start))
    if comm.rank == 0:
        translated = [n for n, _ in counts]
        return len(dev), max(s for _, s in counts), (f"BLEU {bleu:.2f}; sentences translated "
                                                     f"per rank: {translated}")


if __name__ == "__main__":
    compare(create_communicator("ring"), {"fixed": work}, unit=UNIT)
