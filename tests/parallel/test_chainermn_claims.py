"""Every claim of lesson 3's table "ChainerMN vs dlhack.parallel", checked by running both.

| what | ChainerMN | dlhack.parallel |
|---|---|---|
| first update of the multi-node optimizer | broadcasts rank 0's weights, applies no step | broadcasts, then steps |
| scatter_dataset's shards | equal length by default (force_equal_length=True: a few repeated) | exact by default (equal_length=False) |
| evaluator over ranks | mean of the ranks' means | sample-weighted mean |
| communicator names (default) | naive, flat, pure_nccl, ... ("pure_nccl") | naive, ring, mpi, chainermn:* ("ring") |
| on GPUs (from the source) | naive hands device pointers to MPI; non_cuda_aware stages through host memory | — |

The GPU row is read from ChainerMN's source (no GPU here); the others run both libraries.
"""
import inspect

import chainer
import chainer.functions as F
import chainermn
import numpy as np
import pytest
from chainermn.communicators import mpi_communicator_base, naive_communicator

from dlhack import parallel as mn


def perturbed_linear(rank):
    """A small link with different weights on every rank (as an unseeded run would have)."""
    link = chainer.links.Linear(3, 2, initialW=np.random.RandomState(rank).randn(2, 3))
    return link


def loss_of(link):
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    return F.sum(link(x) ** 2)


def flat(link):
    return np.concatenate([p.array.ravel() for _, p in sorted(link.namedparams())])


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_first_update_broadcasts_only_in_chainermn(mpi_comm):
    results = {}
    for name, wrap, comm in (
            ("chainermn", chainermn.create_multi_node_optimizer,
             chainermn.create_communicator("naive", mpi_comm=mpi_comm)),
            ("ours", mn.create_multi_node_optimizer, mn.create_communicator("ring", mpi_comm))):
        link = perturbed_linear(mpi_comm.rank)
        root_start = mpi_comm.bcast(flat(link), root=0)
        optimizer = wrap(chainer.optimizers.SGD(lr=0.1), comm)
        optimizer.setup(link)
        optimizer.update(loss_of, link)
        results[name] = (optimizer.t, flat(link), root_start)
    everyone = mpi_comm.allgather({k: v[1] for k, v in results.items()})

    t, after, root_start = results["chainermn"]
    assert t == 0, "ChainerMN's first update should apply no step"
    assert np.array_equal(after, root_start), "ChainerMN's first update should only broadcast"
    t, after, root_start = results["ours"]
    assert t == 1, "our first update should broadcast and step"
    assert not np.allclose(after, root_start)
    for name in results:
        assert all(np.array_equal(other[name], everyone[0][name]) for other in everyone)


@pytest.mark.mpi(ranks=[2, 3], timeout=60)
def test_shards_are_padded_by_default_in_chainermn_only(mpi_comm):
    size, n = mpi_comm.size, 5
    data = list(range(n))
    cmn, comm = chainermn.create_communicator("naive", mpi_comm=mpi_comm), mn.create_communicator(
        "ring", mpi_comm)
    theirs = mpi_comm.allgather(list(chainermn.scatter_dataset(data, cmn)))
    theirs_exact = mpi_comm.allgather(
        list(chainermn.scatter_dataset(data, cmn, force_equal_length=False)))
    ours = mpi_comm.allgather(list(mn.scatter_dataset(data, comm)))
    ours_padded = mpi_comm.allgather(list(mn.scatter_dataset(data, comm, equal_length=True)))
    padded = -(-n // size)
    assert [len(s) for s in theirs] == [padded] * size
    assert [len(s) for s in ours_padded] == [padded] * size
    for shards in (theirs, ours_padded):
        assert sorted({i for s in shards for i in s}) == data  # every sample, a few twice
    for shards in (theirs_exact, ours):
        assert sorted(i for s in shards for i in s) == data  # every sample exactly once
        assert sum(len(s) for s in shards) == n
    with pytest.raises(TypeError):
        chainermn.scatter_dataset(data, cmn, equal_length=True)
    with pytest.raises(TypeError):
        mn.scatter_dataset(data, comm, force_equal_length=True)


class MeanOf(chainer.Link):
    """The "loss" of a batch is the mean of its samples: a rank's mean is known in advance."""

    def forward(self, x):
        loss = F.mean(x)
        chainer.report({"loss": loss}, self)
        return loss


def evaluate(values, comm, wrap):
    samples = [np.array([v], np.float64) for v in values]
    shard = list(mn.scatter_dataset(samples, comm))  # exact shards: 3 and 2 of 5
    it = chainer.iterators.SerialIterator(shard, 10, repeat=False, shuffle=False)
    evaluator = wrap(chainer.training.extensions.Evaluator(it, MeanOf()), comm)
    return float(evaluator()["main/loss"]), float(np.mean([s[0] for s in shard]))


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_chainermn_averages_rank_means_ours_weighs_samples(mpi_comm):
    values = [1.0, 2.0, 3.0, 10.0, 20.0]
    theirs, mine = evaluate(values, chainermn.create_communicator("naive", mpi_comm=mpi_comm),
                            chainermn.create_multi_node_evaluator)
    ours, _ = evaluate(values, mn.create_communicator("ring", mpi_comm),
                       mn.create_multi_node_evaluator)
    rank_means = mpi_comm.allgather(mine)
    assert theirs == pytest.approx(np.mean(rank_means))  # (2 + 15) / 2 = 8.5
    assert ours == pytest.approx(np.mean(values))  # 36 / 5 = 7.2
    assert theirs != pytest.approx(ours)
    # With equal shards both are the mean over every sample.
    equal = values[:4]
    theirs, _ = evaluate(equal, chainermn.create_communicator("naive", mpi_comm=mpi_comm),
                         chainermn.create_multi_node_evaluator)
    ours, _ = evaluate(equal, mn.create_communicator("ring", mpi_comm),
                       mn.create_multi_node_evaluator)
    assert theirs == pytest.approx(np.mean(equal)) == ours


@pytest.mark.mpi(ranks=[1], timeout=60)
def test_communicator_names(mpi_comm):
    with pytest.raises(ValueError):
        chainermn.create_communicator("ring", mpi_comm=mpi_comm)
    with pytest.raises(ValueError):
        mn.create_communicator("pure_nccl", mpi_comm)
    bridged = mn.create_communicator("chainermn:naive", mpi_comm)
    assert isinstance(bridged, naive_communicator.NaiveCommunicator)
    assert inspect.signature(chainermn.create_communicator).parameters[
        "communicator_name"].default == "pure_nccl"
    assert inspect.signature(mn.create_communicator).parameters["name"].default == "ring"
    for comm in (chainermn.create_communicator("naive", mpi_comm=mpi_comm),
                 mn.create_communicator("ring", mpi_comm)):
        assert (comm.rank, comm.size, comm.intra_rank) == (0, 1, 0)


def test_naive_hands_device_pointers_to_mpi_non_cuda_aware_stages_through_host():
    """Read from ChainerMN's source (no GPU needed): the GPU row of the table."""
    from chainermn.communicators import _memory_utility, non_cuda_aware_communicator

    naive = inspect.getsource(naive_communicator.NaiveCommunicator.multi_node_mean_grad)
    mean = inspect.getsource(mpi_communicator_base.MpiCommunicatorBase._multi_node_mean)
    pointer = inspect.getsource(_memory_utility.get_device_memory_pointer)
    assert "self._multi_node_mean(None, param.grad)" in naive  # the gradient array itself
    assert "array_to_buffer_object" in mean and "self.mpi_comm.Allreduce" in mean
    assert "array.data.ptr" in pointer  # a CuPy array becomes its device address, given to MPI
    staged = inspect.getsource(
        non_cuda_aware_communicator.NonCudaAwareCommunicator.multi_node_mean_grad)
    assert "copy_to_host" in staged and "copy_from_host" in staged  # through pinned host memory
    assert "inter_mpi_comm.Alltoall" in staged and "cpu_buffer" in staged
