"""The translator trained on N ranks with batch b equals one process trained with batch N*b.

This is the property the whole course rests on (lesson 3's equivalence test), checked on the
real model: the Seq2seq loss is the mean over sentences, so averaging N ranks' gradients gives
exactly the gradient of the N*b-sentence batch. Float64 and no dropout keep rounding out of it.
"""
import chainer
import numpy as np
import pytest

from dlhack.corpus.batching import BalancedIterator
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel import create_communicator, create_multi_node_optimizer
from dlhack.parallel.equivalence import max_difference, parameters, train_both

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


def train_on(iterator, model, optimizer):
    for batch in iterator:
        optimizer.update(model, **convert(batch))
    return parameters(model)


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=120)
@pytest.mark.parametrize("uneven", [False, True])
def test_ranks_sharing_global_batches_by_tokens_reproduce_one_process(mpi_comm, uneven):
    """BalancedIterator deals each global batch by tokens (uneven sentence counts); with each
    rank's loss over the batch's normalizer, N ranks still equal one process on the batch,
    and still do when the shares are uneven (``speed_shares``: rank r takes r + 1 parts)."""
    comm = create_communicator("ring", mpi_comm=mpi_comm)
    data = [pair for batch in global_batches() for pair in batch]  # 36 sentences, 3 epochs' worth
    iterator = BalancedIterator(data, 4, comm.size, comm.rank, seed=3, repeat=False)
    iterator.shares = np.arange(1.0, comm.size + 1) if uneven else None
    with chainer.using_config("dtype", np.float64):
        optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(alpha=0.01), comm)
        model = make_model()
        parallel = train_on(iterator, model, optimizer.setup(model))
        reference = make_model()
        single = chainer.optimizers.Adam(alpha=0.01)
        single = train_on(BalancedIterator(data, 4 * comm.size, 1, 0, seed=3, repeat=False),
                          reference, single.setup(reference) or single)
    assert max_difference(parallel, single) < 1e-9
    with chainer.using_config("dtype", np.float64):
        assert max_difference(single, parameters(make_model())) > 1e-3
