"""Slow (f3): every rank evaluates the whole dev set.

    mpiexec -n 2 python 08_eval_every_rank_broken.py    # one process beside 2 ranks

Each rank translates all 192 dev sentences and scores them: the same BLEU, computed twice, in
the time one process takes. Evaluation does not get faster with more ranks, and inside a
training loop the ranks spend that time together, every time the evaluation runs.
"""
import time

import numpy as np
from profiled import compare

from dlhack.corpus import default_corpus
from dlhack.evaluation import bleu_of
from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator

UNIT = "dev sentences/s"
corpus = default_corpus(seed=0, n_train=200, n_dev=192, n_test=1)
dev = list(zip(corpus.dev, (tgt for _, tgt in corpus.raw["dev"])))  # ((src, tgt), reference)
np.random.seed(0)
model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=128, n_layers=2)


def work(comm):
    start = time.perf_counter()
    bleu = bleu_of(model, dev, corpus.tgt_vocab, max_length=20)  # BUG: all of dev, on every rank
    counts = comm.gather_obj((len(dev), time.perf_counter() - start))
    if comm.rank == 0:
        translated = [n for n, _ in counts]
        return len(dev), max(s for _, s in counts), (f"BLEU {bleu:.2f}; sentences translated "
                                                     f"per rank: {translated}")


if __name__ == "__main__":
    compare(create_communicator("ring"), {"broken": work}, unit=UNIT)
