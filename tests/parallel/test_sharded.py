"""The sharded optimizer (dlhack.parallel.sharded): each rank of a node updates its chunk of
the parameters in shared memory, and the ranks still train the model one process trains with
the whole batch."""
import chainer
import numpy as np
import pytest
from chainer.serializers import DictionarySerializer

from dlhack.model.fused import FusedSeq2seq
from dlhack.model.packed_adam import PackedAdam
from dlhack.parallel import create_communicator, create_multi_node_optimizer
from dlhack.parallel.equivalence import max_difference, parameters, train_single
from tests.parallel.test_translator_equivalence import V, global_batches, translator_loss


def make_model():
    np.random.seed(0)  # the same initial weights on every call and every rank
    return FusedSeq2seq(V, V, n_units=8, n_layers=2, dropout=0.0)


def train_sharded(comm, batches, shard=True, perturb=0.1, chunk=None, monkeypatch=None):
    """Train on this rank's slice of each global batch; returns (model, optimizer)."""
    if chunk is not None:
        monkeypatch.setattr("dlhack.model.packed_adam.CHUNK", chunk)
    model = make_model()
    for param in model.params():  # only rank 0's weights may count
        param.array[...] += perturb * comm.rank
    optimizer = create_multi_node_optimizer(PackedAdam(alpha=0.01), comm, shard=shard)
    optimizer.setup(model)
    b = len(batches[0]) // comm.size
    for examples in batches:
        optimizer.update(translator_loss, model, examples[comm.rank * b:(comm.rank + 1) * b])
    return model, optimizer


@pytest.mark.mpi(ranks=[2, 3], timeout=120)
def test_sharded_ranks_reproduce_one_process_with_the_whole_batch(mpi_comm, monkeypatch):
    """Float64 (numpy's Adam): N ranks, each updating its chunk, end where one process with
    batch N*b ends; blocks of 64 elements, so chunks start and stop inside parameters."""
    comm = create_communicator("shm", mpi_comm=mpi_comm)
    with chainer.using_config("dtype", np.float64):
        model, optimizer = train_sharded(comm, global_batches(), chunk=64,
                                         monkeypatch=monkeypatch)
        single = train_single(make_model, lambda: PackedAdam(alpha=0.01), global_batches(),
                              translator_loss)
        initial = parameters(make_model())
    parallel = parameters(model)
    assert max_difference(parallel, single) < 1e-9
    assert max_difference(single, initial) > 1e-3  # training really moved the weights
    assert optimizer.t == 3
    # one copy per node: every rank's parameters are views of the same shared buffer
    assert all(np.shares_memory(p.array, optimizer.actual_optimizer._data)
               for p in model.params())
    every = comm.gather_obj(parallel)
    if comm.rank == 0:
        assert all(max_difference(mine, every[0]) == 0.0 for mine in every)


def moments(optimizer):
    state = {}
    optimizer.actual_optimizer.serialize(DictionarySerializer(state))
    return state


@pytest.mark.mpi(ranks=[2], timeout=120)
def test_sharded_equals_the_shm_path_weights_and_moments(mpi_comm):
    """Float32 (the compiled update): the same parameters as every rank updating everything
    (MultiNodeOptimizer with "shm"), and rank 0 saves every chunk's moments in a snapshot."""
    comm = create_communicator("shm", mpi_comm=mpi_comm)
    sharded, sharded_optimizer = train_sharded(comm, global_batches())
    plain, plain_optimizer = train_sharded(comm, global_batches(), shard=False)
    assert max_difference(parameters(sharded), parameters(plain)) < 1e-6
    a, b = moments(sharded_optimizer), moments(plain_optimizer)
    assert sorted(a) == sorted(b) and any(k.endswith("/v") for k in a)
    for key in a:
        np.testing.assert_allclose(a[key], b[key], rtol=1e-5, atol=1e-9, err_msg=key)


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_sharded_refuses_what_it_cannot_do(mpi_comm):
    comm = create_communicator("shm", mpi_comm=mpi_comm)
    with pytest.raises(ValueError, match="PackedAdam"):
        create_multi_node_optimizer(chainer.optimizers.Adam(), comm, shard=True)
    with pytest.raises(ValueError, match="overlap"):
        create_multi_node_optimizer(PackedAdam(), comm, shard=True, overlap=True)
    ring = create_communicator("ring", mpi_comm=mpi_comm)
    with pytest.raises(ValueError, match="'shm'"):
        create_multi_node_optimizer(PackedAdam(), ring, shard=True)
    model = make_model()
    optimizer = create_multi_node_optimizer(PackedAdam(), comm, shard=True).setup(model)
    optimizer.add_hook(chainer.optimizer_hooks.GradientClipping(1.0))
    with pytest.raises(ValueError, match="hook"):  # raised on every rank, before any barrier
        optimizer.update(translator_loss, model, global_batches(1, 2)[0][comm.rank:][:1])


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_sharded_refuses_a_model_whose_parameters_changed(mpi_comm):
    """The gradients go where setup placed each parameter; a link added or replaced since is
    refused at the next step, on every rank, before any barrier (the test would hang else)."""
    comm = create_communicator("shm", mpi_comm=mpi_comm)
    batch = global_batches(1, 2)[0][comm.rank:][:1]
    for change in ("add", "replace"):
        model = make_model()
        optimizer = create_multi_node_optimizer(PackedAdam(), comm, shard=True).setup(model)
        optimizer.update(translator_loss, model, batch)
        shape = model.W_o.W.shape
        if change == "replace":
            del model.W_o
        with model.init_scope():
            if change == "add":
                model.extra = chainer.links.Linear(2, 2)
            else:  # the same name, a new parameter object
                model.W_o = chainer.links.Linear(shape[1], shape[0])
        with pytest.raises(ValueError, match="changed since setup"):
            optimizer.update(translator_loss, model, batch)


def test_one_rank_cannot_shard():
    from mpi4py import MPI

    comm = create_communicator("shm", mpi_comm=MPI.COMM_SELF.Dup())
    with pytest.raises(ValueError, match="two or more ranks"):
        create_multi_node_optimizer(PackedAdam(), comm, shard=True)
