"""The translator trained on N ranks with batch b equals one process trained with batch N*b.

This is the property the whole course rests on (lesson 3's equivalence test), checked on the
real model: the Seq2seq loss is the mean over sentences, so averaging N ranks' gradients gives
exactly the gradient of the N*b-sentence batch. Float64 and no dropout keep rounding out of it.
"""
import chainer
import numpy as np
import pytest

from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel import create_communicator
from dlhack.parallel.equivalence import max_difference, train_both

V = 30


def make_model():
    np.random.seed(0)  # the same initial weights on every call and every rank
    return Seq2seq(V, V, n_units=8, n_layers=2, dropout=0.0, attention=True)


def translator_loss(model, examples):
    return model([x for x, _ in examples], [y for _, y in examples])


def global_batches(n_batches=3, size=12):
    rng = np.random.RandomState(1)
    return [[(rng.randint(3, V, rng.randint(1, 8)).astype(np.int32),
              rng.randint(3, V, rng.randint(1, 9)).astype(np.int32)) for _ in range(size)]
            for _ in range(n_batches)]


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=120)
@pytest.mark.parametrize("algorithm", ["ring", "chainermn:naive"])
def test_n_ranks_reproduce_one_process_with_n_times_the_batch(mpi_comm, algorithm):
    comm = create_communicator(algorithm, mpi_comm=mpi_comm)
    with chainer.using_config("dtype", np.float64):
        parallel, single = train_both(make_model, lambda: chainer.optimizers.Adam(alpha=0.01),
                                      global_batches(), translator_loss, comm, perturb=0.1)
    assert max_difference(parallel, single) < 1e-9
    with chainer.using_config("dtype", np.float64):
        initial = {name: p.array.copy() for name, p in sorted(make_model().namedparams())}
    assert max_difference(single, initial) > 1e-3  # training really moved the weights
