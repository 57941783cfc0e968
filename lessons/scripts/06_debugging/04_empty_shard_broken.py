"""Bug (d): an error on some ranks only: a shard that is empty at 4 ranks.

    dlhack run -n 2 -- python 04_empty_shard_broken.py    # runs, but prints a wrong loss
    dlhack run -n 4 -- python 04_empty_shard_broken.py    # fails on rank 3 only

The dev loss of a 3-sentence dev set: each rank scores its shard and the ranks' means are
averaged. At 4 ranks, rank 3's shard is empty and the model cannot run on an empty batch
(ValueError: max() arg is an empty sequence). At 2 ranks it runs, but the shards hold 2 and 1
sentences, and the mean of the two means weighs the lone sentence twice as much as the others.
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

with chainer.no_backprop_mode(), chainer.using_config("train", False):
    loss = float(model([x for x, _ in dev], [y for _, y in dev]).array)  # BUG: dev may be empty
dev_loss = comm.allreduce_obj(loss) / comm.size  # BUG: every rank weighs the same
if comm.rank == 0:
    print(f"dev loss {dev_loss:.4f} (3 sentences, {comm.size} ranks)")
