"""The costs the parallel modules' docstrings state, counted on the wire.

Each test wraps the test's communicator in ``CountingComm`` and checks the messages and bytes
of one step (or one call) against the formula in the module's docstring: the multi-node
optimizer (ring and naive), scattering, the evaluator and the parameter server (``p2p``'s, in
test_p2p.py).
"""
from collections import Counter

import chainer
import chainer.links as L
import numpy as np
import pytest

from dlhack.parallel import (
    Communicator,
    allreduce_ring,
    create_multi_node_evaluator,
    create_multi_node_optimizer,
    gather_corpus_bleu,
    scatter_dataset,
    scatter_index,
    scatter_subdataset,
)
from dlhack.parallel import paramserver as ps
from dlhack.parallel.counting import CountingComm
from tests.parallel.tiny_mlp import make_mlp, mlp_examples

ITEMSIZE = 4  # float32


def optimizer_steps(counting, algorithm):
    """Two updates of the tiny MLP: what each one sent, and the model's (m arrays, n elements)."""
    comm = Communicator(counting, algorithm)
    model = L.Classifier(make_mlp(seed=comm.rank))
    optimizer = create_multi_node_optimizer(chainer.optimizers.SGD(), comm).setup(model)
    x, t = chainer.dataset.concat_examples(mlp_examples(4, seed=comm.rank))
    counting.reset()
    optimizer.update(model, x, t)
    first = counting.reset()
    optimizer.update(model, x, t)
    second = counting.reset()
    params = [param for _, param in model.namedparams()]
    return first, second, len(params), sum(param.size for param in params)


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_multi_node_optimizer_ring_cost_per_step(mpi_comm, monkeypatch):
    """2(p-1) messages of about n/p per step, 2(p-1)/p*n*itemsize bytes; m Bcasts the first time."""
    rank, p = mpi_comm.rank, mpi_comm.size
    counting = CountingComm(mpi_comm)
    (calls1, sent1), (calls2, sent2), m, n = optimizer_steps(counting, "ring")
    monkeypatch.setattr(allreduce_ring, "SEGMENT_BYTES", 3 * ITEMSIZE)  # k segments per chunk
    _, (calls_k, _), _, _ = optimizer_steps(counting, "ring")

    assert n == 81 and m == 6, "the tiny MLP, its unused link included (zero_fill)"
    assert calls1["Bcast"] == m and calls2["Bcast"] == 0
    if rank == 0:
        assert sent1["Bcast"] == n * ITEMSIZE
    assert calls1["Sendrecv"] == calls2["Sendrecv"] == 2 * (p - 1)
    # Rank r sends every chunk but chunk r+1 in the reduce-scatter, but chunk r+2 in the allgather.
    length = [end - begin for begin, end in allreduce_ring.chunk_bounds(n, p)]
    exact = (2 * n - length[(rank + 1) % p] - length[(rank + 2) % p]) * ITEMSIZE
    assert sent2["Sendrecv"] == exact
    assert abs(exact - 2 * (p - 1) / p * n * ITEMSIZE) <= 2 * ITEMSIZE
    k = -(-length[0] // 3)
    assert calls_k["Sendrecv"] == (p - 1) * (k + 1)


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=60)
def test_multi_node_optimizer_naive_cost_per_step(mpi_comm):
    """Naive: one message of n each way per rank; the root sends and receives p-1."""
    rank, p = mpi_comm.rank, mpi_comm.size
    _, (calls, sent), _, n = optimizer_steps(CountingComm(mpi_comm), "naive")
    messages = p - 1 if rank == 0 else 1
    assert calls["Send"] == calls["Recv"] == messages
    assert sent["Send"] == messages * n * ITEMSIZE


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_scatter_costs(mpi_comm):
    """scatter_dataset: p-1 messages from the root, one to each other rank; scatter_index and
    scatter_subdataset: none (one bcast when asked to shuffle without a seed)."""
    rank, p = mpi_comm.rank, mpi_comm.size
    counting = CountingComm(mpi_comm)
    comm = Communicator(counting, "ring")
    data = [f"sample{i}" for i in range(10)]
    counting.reset()
    scatter_dataset(data if rank == 0 else None, comm, shuffle=True, seed=1)
    dataset, _ = counting.reset()
    scatter_index(10, comm, shuffle=True, seed=1)
    scatter_subdataset(data, comm, shuffle=True, seed=1)
    indexed, _ = counting.reset()
    scatter_index(10, comm, shuffle=True, seed=None)
    drawn, _ = counting.reset()

    # Counter equality counts a missing name as 0: on one rank the root sends nothing.
    assert dataset == (Counter(send=p - 1) if rank == 0 else Counter(recv=1))
    assert indexed == {}
    assert drawn == {"bcast": 1}


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_evaluator_costs(mpi_comm):
    """Per evaluation: one gather and one bcast of a few hundred bytes, whatever the dev set;
    gather_corpus_bleu's gather grows with the sentences gathered."""
    rank = mpi_comm.rank
    counting = CountingComm(mpi_comm)
    comm = Communicator(counting, "ring")
    model = L.Classifier(make_mlp(seed=0))
    evaluations = []
    for n in (8, 80):
        it = chainer.iterators.SerialIterator(mlp_examples(n), 4, repeat=False, shuffle=False)
        evaluator = create_multi_node_evaluator(
            chainer.training.extensions.Evaluator(it, model), comm)
        counting.reset()
        evaluator()
        evaluations.append(counting.reset())
    bleu = []
    for n in (4, 40):
        counting.reset()
        refs = [[f"w{i}", f"w{i + 1}", f"w{i + 2}"] for i in range(n)]  # distinct, so pickle
        gather_corpus_bleu([ref[:2] for ref in refs], refs, comm)       # cannot share them
        bleu.append(counting.reset())

    for calls, _ in evaluations + bleu:
        assert calls == {"gather": 1, "bcast": 1}
    (_, small), (_, large) = evaluations
    assert small == large, "the evaluator's messages must not grow with the dev set"
    assert small["gather"] + small["bcast"] < 300
    if rank != 0:
        assert bleu[1][1]["gather"] > 5 * bleu[0][1]["gather"]


@pytest.mark.mpi(ranks=[2, 3], timeout=60)
def test_parameter_server_costs(mpi_comm):
    """A worker: 2 messages of n per step (plus DONE); the server: 2(p-1) per sync round."""
    rank, workers, steps = mpi_comm.rank, mpi_comm.size - 1, 5
    problem = ps.make_problem(seed=0, n_samples=64, n_features=6)
    n = problem.n_params
    counting = CountingComm(mpi_comm)
    for serve in (ps.sync_server, ps.async_server):
        params = np.zeros(n, np.float32)
        if rank == 0:
            serve(counting, params, workers, lr=0.1)
        else:
            grad_fn = ps.make_grad_fn(problem, rank - 1, workers, batchsize=4)
            ps.worker_loop(counting, params, grad_fn, steps)
        calls, sent = counting.reset()
        pushed = workers * steps
        if rank == 0:  # one reply per gradient; the DONE messages are received too
            assert calls == {"Recv": pushed + workers, "Send": pushed}, serve.__name__
            assert sent["Send"] == pushed * n * ITEMSIZE
        else:
            assert calls == {"Send": steps + 1, "Recv": steps}, serve.__name__
            assert sent["Send"] == steps * n * ITEMSIZE  # DONE is empty
