"""Time a few data-parallel training steps phase by phase; used by the 06_* and 07_* scripts.

    summary, sentences_per_sec = profile_steps(comm, batchsize=32)
    show(comm, summary, sentences_per_sec, batchsize=32)     # rank 0 prints

The steps are those of ``dlhack train --profile``: the multi-node optimizer's ordinary steps,
timed from the outside by ``dlhack.step_profile.ProfilingUpdater`` in phases: data, forward,
backward, wait (a barrier: time spent waiting for the slowest rank), allreduce and optimizer,
each in milliseconds per step, for every rank.
"""
import tempfile

import chainer
import numpy as np

from dlhack import step_profile
from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel import create_multi_node_optimizer, scatter_dataset


def profile_steps(comm, batchsize, iterations=12, units=128, layers=2, n_train=1000, lr=2e-3):
    """Train ``iterations`` steps on the embedded corpus; returns (summary, sentences/s)."""
    corpus = default_corpus(seed=0, n_train=n_train, n_dev=1, n_test=1) if comm.rank == 0 else None
    sizes = comm.bcast_obj((len(corpus.src_vocab), len(corpus.tgt_vocab)) if corpus else None)
    train = scatter_dataset(corpus.train if corpus else None, comm, shuffle=True, seed=0,
                            equal_length=True)
    np.random.seed(0)
    model = Seq2seq(*sizes, n_units=units, n_layers=layers)
    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(alpha=lr), comm)
    optimizer.setup(model)
    updater = step_profile.ProfilingUpdater(BucketIterator(train, batchsize), optimizer, comm,
                                            converter=convert)
    trainer = chainer.training.Trainer(updater, (iterations, "iteration"),
                                       out=tempfile.gettempdir())
    trainer.run()
    sentences = updater.iteration * batchsize * comm.size
    return updater.summary(), sentences / updater.elapsed


def show(comm, summary, sentences_per_sec, batchsize):
    """Rank 0 prints the breakdown, the throughput and ``dlhack.step_profile.verdict``."""
    if comm.rank == 0:
        print(step_profile.format_breakdown(summary))
        print(f"{sentences_per_sec:.1f} sentences/s on {comm.size} rank(s), "
              f"batch {batchsize} per rank")
        print("verdict:", step_profile.verdict(summary, batchsize=batchsize))
