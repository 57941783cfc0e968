"""The communicator (dlhack.parallel.communicator): ours and ChainerMN's behind one name, each
algorithm's allreduce and the object collectives on every rank count, and a clear error for an
unknown name."""
import numpy as np
import pytest

from dlhack.parallel import create_communicator
from tests.parallel.tiny_mlp import make_mlp


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_communicator_allreduce_and_objects(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    results = {}
    for name in ("naive", "ring", "mpi", "chainermn:naive"):
        comm = create_communicator(name, mpi_comm=mpi_comm)
        x = np.full((2, 3), rank + 1, np.float32)
        results[name] = (
            comm.allreduce(x),
            comm.bcast_obj({"root": rank} if rank == 0 else None, root=0),
            comm.gather_obj(rank, root=0),
            comm.allreduce_obj(rank + 1),
        )
        if size > 1:  # a ring of send_obj/recv_obj, even ranks sending first
            right, left = (rank + 1) % size, (rank - 1) % size
            if rank % 2 == 0:
                comm.send_obj(("from", rank), dest=right)
                got = comm.recv_obj(source=left)
            else:
                got = comm.recv_obj(source=left)
                comm.send_obj(("from", rank), dest=right)
            results[name] += (got == ("from", left),)
    total = size * (size + 1) // 2
    for name, (summed, bcast, gathered, reduced, *ring) in results.items():
        assert np.array_equal(summed, np.full((2, 3), total, np.float32)), name
        assert bcast == {"root": 0}, name
        assert gathered == (list(range(size)) if rank == 0 else None), name
        assert reduced == total, name
        assert all(ring), name


def test_unknown_communicator_name_says_what_exists():
    with pytest.raises(ValueError, match="ring"):
        create_communicator("tree", mpi_comm=object())


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=60)
def test_mean_grad_leaves_means_that_later_calls_do_not_touch(mpi_comm):
    """The mean of every gradient, each call's own: the gradients become pieces of a buffer
    made for that call, not views of one shared by every call."""
    rank, size = mpi_comm.rank, mpi_comm.size
    comm = create_communicator("ring", mpi_comm=mpi_comm)
    model = make_mlp()
    means = []
    for step in range(2):
        model.cleargrads()
        grads = {name: np.full(p.shape, (rank + 1) * (step + 1), p.dtype)
                 for name, p in sorted(model.namedparams()) if name != "/unused/W"}
        for name, p in sorted(model.namedparams()):
            p.grad = grads.get(name)
        comm.multi_node_mean_grad(model, zero_fill=True)
        means.append({name: p.grad for name, p in model.namedparams()})

    for step, mean in enumerate(means):
        expected = (size + 1) / 2 * (step + 1)  # the mean of (rank + 1) * (step + 1)
        for name, grad in mean.items():
            np.testing.assert_array_equal(
                grad, 0.0 if name == "/unused/W" else expected, err_msg=f"step {step} {name}")
    assert not np.shares_memory(means[0]["/l1/W"], means[1]["/l1/W"])


@pytest.mark.parametrize("name", ["ring", "shm"])
def test_one_rank_leaves_the_gradients_as_they_are(name):
    """With one rank each gradient is its own mean: no copy into a buffer, the same arrays
    (a lone process pays nothing for the data-parallel code path); an unused parameter still
    gets its zero gradient."""
    from mpi4py import MPI

    comm = create_communicator(name, mpi_comm=MPI.COMM_SELF.Dup())
    model = make_mlp()
    model.cleargrads()
    for param_name, p in sorted(model.namedparams()):
        if param_name != "/unused/W":
            p.grad = np.full(p.shape, 3.0, p.dtype)
    before = {n: p.grad for n, p in model.namedparams()}
    comm.multi_node_mean_grad(model, zero_fill=True)
    for param_name, p in model.namedparams():
        if param_name == "/unused/W":
            np.testing.assert_array_equal(p.grad, 0.0)
        else:
            assert p.grad is before[param_name], param_name
            np.testing.assert_array_equal(p.grad, 3.0)
