"""The shared-memory communicator (dlhack.parallel.shared_memory): the same means as the ring
through one shared window on one node, the ring where the ranks do not share memory or the
gradients do not fit its one buffer, and no harm from averaging means again.

Training with it equals single-process training in test_optimizer.py, beside the other
algorithms."""
import chainer
import chainer.links as L
import numpy as np
import pytest

from dlhack.parallel import create_communicator
from tests.parallel.tiny_mlp import make_mlp


def set_grads(model, rank, step=0, dtype=None):
    """Every gradient but ``/unused/W``'s: random, different on every rank and step; returns
    them as ``{name: array}``."""
    rng = np.random.RandomState(1000 * step + rank)
    grads = {}
    for name, p in sorted(model.namedparams()):
        p.grad = None
        if name != "/unused/W":
            grads[name] = p.grad = rng.standard_normal(p.shape).astype(dtype or p.dtype)
    return grads


def serial_mean(mpi_comm, grads):
    """The reference: every rank's gradients gathered, averaged in float64."""
    everyone = mpi_comm.allgather(grads)
    return {name: np.mean([g[name].astype(np.float64) for g in everyone], axis=0)
            for name in grads}


def grad_of(model, name):
    return dict(model.namedparams())[name].grad


def window_of(comm):
    """The one shared mean window ``comm`` made so far, or None."""
    assert len(comm._windows) <= 1
    return next(iter(comm._windows.values())).mean if comm._windows else None


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_shared_memory_means_equal_the_serial_mean_and_the_ring(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    shm = create_communicator("shm", mpi_comm=mpi_comm)
    ring = create_communicator("ring", mpi_comm=mpi_comm)
    assert shm.shares_memory  # every rank of an mpiexec on one machine
    results = {}
    for name, comm in (("shm", shm), ("ring", ring)):
        model = make_mlp()
        grads = set_grads(model, rank)
        comm.multi_node_mean_grad(model)
        results[name] = {n: p.grad for n, p in sorted(model.namedparams())}
    expected = serial_mean(mpi_comm, grads)
    window = window_of(shm)
    for name, mean in results["shm"].items():
        if name == "/unused/W":
            assert mean is None  # no gradient, no mean (zero_fill=False)
            continue
        np.testing.assert_allclose(mean, expected[name], rtol=1e-6, atol=1e-6, err_msg=name)
        # every rank holds the same bits; two ranks add in the ring's order, so the same bits
        assert len({m.tobytes() for m in mpi_comm.allgather(mean)}) == 1, name
        if size <= 2:
            np.testing.assert_array_equal(mean, results["ring"][name], err_msg=name)
        # one rank: the plain path; more: the means lie in the shared window
        assert (window is not None and np.shares_memory(mean, window)) == (size > 1), name


@pytest.mark.mpi(ranks=[2, 3], timeout=60)
def test_means_averaged_again_and_a_new_layout(mpi_comm):
    """Averaging the means again (no backward in between: the gradients are still views of the
    window being written) gives them back; ``zero_fill`` adds a parameter, so a new layout
    gets windows of its own."""
    rank = mpi_comm.rank
    comm = create_communicator("shm", mpi_comm=mpi_comm)
    model = make_mlp()
    grads = set_grads(model, rank)
    comm.multi_node_mean_grad(model)
    first = {n: p.grad.copy() for n, p in model.namedparams() if p.grad is not None}
    comm.multi_node_mean_grad(model)
    for name, mean in first.items():
        np.testing.assert_allclose(grad_of(model, name), mean, rtol=1e-6, err_msg=name)

    grads = set_grads(model, rank, step=1)
    comm.multi_node_mean_grad(model, zero_fill=True)
    assert len(comm._windows) == 2
    expected = serial_mean(mpi_comm, grads)
    for name, p in model.namedparams():
        want = expected.get(name, 0.0)
        np.testing.assert_allclose(p.grad, want, rtol=1e-6, atol=1e-6, err_msg=name)


@pytest.mark.mpi(ranks=[2, 3], timeout=60)
def test_ranks_on_different_hosts_or_mixed_dtypes_take_the_ring(mpi_comm):
    rank = mpi_comm.rank
    apart = create_communicator("shm", mpi_comm=mpi_comm, hostname=f"node{rank}")
    assert not apart.shares_memory  # pretend nodes: no shared window between them
    together = create_communicator("shm", mpi_comm=mpi_comm)
    for case, comm in (("hosts", apart), ("dtypes", together)):
        model = make_mlp()
        if case == "dtypes":  # a float64 link beside float32 ones: no single buffer type
            with chainer.using_config("dtype", np.float64), model.init_scope():
                model.wide = L.Linear(2, 2)
        grads = set_grads(model, rank)
        comm.multi_node_mean_grad(model)
        expected = serial_mean(mpi_comm, grads)
        for name, mean in expected.items():
            np.testing.assert_allclose(grad_of(model, name), mean, rtol=1e-6, atol=1e-6,
                                       err_msg=f"{case} {name}")
        assert not comm._windows, case
