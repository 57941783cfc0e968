"""Shared by the graded tests of lab 03: the `comm` the answers get, a tiny model and its data,
and how to say what is wrong with a set of shards. (The single-process reference that
data-parallel training must reproduce is the library's, ``dlhack.parallel.equivalence``.)"""
import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
from labtools import block_imports, spans, switch_off

import dlhack.parallel
import dlhack.parallel.communicator
import dlhack.parallel.optimizer
import dlhack.parallel.scatter
import dlhack.parallel.sharded

# The library's versions of this lab's answers: the tests use dlhack.parallel.equivalence (the
# single-process reference), so the package stays importable, but its answers are switched off.
block_imports(("chainermn",), "{name} has this lab's answers built in: it cannot be imported here")
switch_off([(dlhack.parallel.communicator.Communicator, "multi_node_mean_grad"),
            (dlhack.parallel.communicator.Communicator, "bcast_data"),
            (dlhack.parallel, "create_multi_node_optimizer"),
            (dlhack.parallel.optimizer, "create_multi_node_optimizer"),
            (dlhack.parallel.optimizer, "MultiNodeOptimizer"),
            (dlhack.parallel.optimizer, "OverlappedMultiNodeOptimizer"),
            (dlhack.parallel.sharded, "ShardedMultiNodeOptimizer"),
            (dlhack.parallel, "scatter_dataset"), (dlhack.parallel.scatter, "scatter_dataset"),
            (dlhack.parallel, "scatter_index"), (dlhack.parallel.scatter, "scatter_index"),
            (dlhack.parallel, "scatter_subdataset"), (dlhack.parallel.scatter, "scatter_subdataset")],
           "the answer called {name}, the course library's version of what this lab asks you to "
           "write yourself")

DTYPE = np.float64  # double precision: what is left between two correct runs is rounding


class LabComm:
    """What the answers get as ``comm``: ``rank``, ``size`` and ``mpi_comm`` (mpi4py), no more.

    The course's communicator has ``bcast_data`` and ``multi_node_mean_grad`` too; the lab asks
    you to write what they do, so here they are missing on purpose.
    """

    def __init__(self, mpi_comm):
        self.mpi_comm = mpi_comm
        self.rank = mpi_comm.rank
        self.size = mpi_comm.size

    def __getattr__(self, name):
        raise AttributeError(
            f"comm.{name} does not exist in this lab: use comm.rank, comm.size and comm.mpi_comm, "
            f"an mpi4py communicator (Bcast, Allreduce, bcast, scatter, send, recv)")


class MLP(chainer.Chain):
    """Two layers, no dropout: ``(batch, 4) -> (batch, 3)``, weights fixed by ``seed``."""

    def __init__(self, seed=0):
        super().__init__()
        rng = np.random.RandomState(seed)

        def normal():
            return chainer.initializers.Normal(0.5, dtype=DTYPE, rng=rng)

        with self.init_scope():
            self.l1 = L.Linear(4, 6, initialW=normal(), initial_bias=normal())
            self.l2 = L.Linear(6, 3, initialW=normal(), initial_bias=normal())

    def forward(self, x):
        return self.l2(F.tanh(self.l1(x)))


def make_mlp(seed=0):
    with chainer.using_config("dtype", DTYPE):
        return MLP(seed)


def examples(n, seed):
    """``n`` examples ``(x, t)``: x of shape (4,), t a class in 0..2."""
    rng = np.random.RandomState(seed)
    x = rng.normal(size=(n, 4)).astype(DTYPE)
    t = rng.randint(0, 3, size=n).astype(np.int32)
    return list(zip(x, t))


def mlp_loss(model, batch):
    """Mean softmax cross-entropy over ``batch``: a mean, as data parallelism needs."""
    x, t = chainer.dataset.concat_examples(batch)
    return F.softmax_cross_entropy(model(x), t)


def flat(params):
    """``{name: array}`` -> one flat array, in name order."""
    return np.concatenate([params[k].ravel() for k in sorted(params)])


def first_disagreeing_rank(per_rank):
    """The first rank whose flat parameters differ from rank 0's, or None."""
    for rank, values in enumerate(per_rank):
        if not np.array_equal(values, per_rank[0]):
            return rank
    return None


def shard_problem(dataset_ids, shards, size):
    """None when ``shards`` (one list of sample ids per rank) is an exact, even partition of
    ``dataset_ids``; else one sentence saying what is wrong."""
    n = len(dataset_ids)
    owners = {i: [] for i in dataset_ids}
    for rank, shard in enumerate(shards):
        for i in shard:
            owners[i].append(rank)
    missing = [i for i in dataset_ids if not owners[i]]
    split_hint = (f": check how you split when {n} samples do not divide by {size} ranks "
                  f"(np.array_split gives pieces whose lengths differ by at most one)"
                  if n % size else "")
    if missing:
        return (f"sample{'s' if len(missing) > 1 else ''} {spans(missing)} of {n} "
                f"{'are' if len(missing) > 1 else 'is'} missing: no rank got "
                f"{'them' if len(missing) > 1 else 'it'}{split_hint}")
    twice = [i for i in dataset_ids if len(owners[i]) > 1]
    if twice:
        i = twice[0]
        where = " and ".join(f"rank {r}" for r in owners[i][:3])
        return (f"sample {i} went to {where}; every sample must go to exactly one rank"
                f"{split_hint}")
    lengths = [len(s) for s in shards]
    if max(lengths) - min(lengths) > 1:
        big, small = int(np.argmax(lengths)), int(np.argmin(lengths))
        return (f"rank {big} got {lengths[big]} samples and rank {small} got {lengths[small]}: "
                f"shard lengths may differ by at most one, or one rank does all the work")
    return None


def order_problem(order, shards):
    """None when ``shards`` (sample ids per rank), read in rank order, are ``order`` cut into
    contiguous pieces; else one sentence saying which rank's piece is not."""
    start = 0
    for rank, shard in enumerate(shards):
        piece = list(order[start:start + len(shard)])
        if list(shard) != piece:
            return (f"rank {rank} got samples {spans(sorted(shard))} in the order {list(shard)[:8]}"
                    f"{'...' if len(shard) > 8 else ''}, but the next {len(shard)} samples of the "
                    f"dealing order are {piece[:8]}{'...' if len(piece) > 8 else ''}: cut the "
                    f"order into contiguous pieces, rank 0 the first (np.array_split), not every "
                    f"size-th sample")
        start += len(shard)
    return None
