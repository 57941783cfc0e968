"""Fix (d): skip an empty shard, and weigh each rank by its number of sentences.

    dlhack run -n 4 -- python 04_empty_shard_fixed.py     # the same loss as with -n 1

The fix that dlhack.parallel.create_multi_node_evaluator applies: add up loss x sentences and
sentences over the ranks, then divide once.
"""
import chainer
import numpy as np

from dlhack.corpus import default_corpus
from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator, scatter_dataset

comm = create_communicator("ring")
corpus = default_corpus(seed=0, n_train=200, n_dev=3, n_test=1) if comm.rank == 0 else None
sizes = comm.bcast_obj((len(corpus.src_vocab), len(corpus.tgt_vocab)) if corpus else None)
dev = scatter_dataset(corpus.dev if corpus else None, comm)  # exact: 1, 1, 1, 0 at 4 ranks
np.random.seed(0)  # the same untrained model on every rank
model = Seq2seq(*sizes, n_units=32, n_layers=1, dropout=0.0)

loss_sum = 0.0
if dev:  # FIX: an empty shard contributes nothing
    with chainer.no_backprop_mode(), chainer.using_config("train", False):
        loss_sum = float(model([x for x, _ in dev], [y for _, y in dev]).array) * len(dev)
dev_loss = comm.allreduce_obj(loss_sum) / comm.allreduce_obj(len(dev))  # FIX: weighted
if comm.rank == 0:
    print(f"dev loss {dev_loss:.4f} (3 sentences, {comm.size} ranks)")
