"""Our communicator works inside ChainerMN's helpers, and ChainerMN's inside ours."""
import chainer
import chainermn
import numpy as np
import pytest

from dlhack.parallel import create_communicator, scatter_dataset
from dlhack.parallel.equivalence import (
    max_difference,
    parameters,
    train_data_parallel,
    train_single,
)
from tests.parallel.tiny_mlp import make_mlp, mlp_examples, mlp_loss


def train_with_chainermn_optimizer(comm, rank, steps=4):
    """ChainerMN's own multi-node optimizer (its first update only broadcasts)."""
    model = make_mlp(seed=rank, dtype=np.float64)
    optimizer = chainermn.create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
    optimizer.setup(model)
    for step in range(steps):
        optimizer.update(mlp_loss, model, mlp_examples(4, seed=10 * step + rank, dtype=np.float64))
    return parameters(model)


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_communicators_are_interchangeable(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    ours = create_communicator("ring", mpi_comm=mpi_comm)
    theirs = create_communicator("chainermn:naive", mpi_comm=mpi_comm)

    # 1. ChainerMN's optimizer: our communicator vs ChainerMN's naive one.
    with_ours = train_with_chainermn_optimizer(ours, rank)
    with_theirs = train_with_chainermn_optimizer(theirs, rank)
    # 2. Our optimizer with ChainerMN's communicator still equals single-process training.
    batches = [mlp_examples(2 * size, seed=step, dtype=np.float64) for step in range(3)]

    def make_model():
        return make_mlp(seed=0, dtype=np.float64)

    def make_adam():
        return chainer.optimizers.Adam(alpha=0.01)

    ours_theirs = train_data_parallel(make_model, make_adam, batches, mlp_loss, theirs, 0.1)
    single = train_single(make_model, make_adam, batches, mlp_loss)
    # 3. ChainerMN's scatter_dataset with our communicator, ours with theirs: same exact shards.
    data = list(range(11)) if rank == 0 else None
    their_scatter = list(chainermn.scatter_dataset(data, ours, shuffle=True, seed=1,
                                                   force_equal_length=False))
    our_scatter = scatter_dataset(data, theirs, shuffle=True, seed=1)
    # 4. ChainerMN's evaluator with our communicator (it uses allreduce_obj and size).
    it = chainer.iterators.SerialIterator(mlp_examples(4, seed=rank), 4, repeat=False)
    evaluator = chainer.training.extensions.Evaluator(
        it, chainer.links.Classifier(make_mlp(seed=0)))
    local = float(evaluator()["main/loss"])
    cmn_loss = chainermn.create_multi_node_evaluator(evaluator, ours)()["main/loss"]
    mean_local = mpi_comm.allreduce(local) / size

    assert max_difference(with_ours, with_theirs) < 1e-12
    assert max_difference(with_ours, parameters(make_mlp(seed=0, dtype=np.float64))) > 1e-3
    assert max_difference(ours_theirs, single) < 1e-12
    assert their_scatter == our_scatter
    assert sorted(x for shard in mpi_comm.allgather(our_scatter) for x in shard) == list(range(11))
    assert cmn_loss == pytest.approx(mean_local, rel=1e-6)
