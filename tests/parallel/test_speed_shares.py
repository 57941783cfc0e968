"""Shares that follow each rank's speed (dlhack.parallel.speed_shares): the ranks agree on the
same shares, a slower rank gets less of every global batch, and nothing but a balanced
iterator under a multi-node optimizer is taken."""
from types import SimpleNamespace

import numpy as np
import pytest

from dlhack.corpus.batching import BalancedIterator
from dlhack.parallel import create_communicator
from dlhack.parallel.speed_shares import SpeedShares
from tests.corpus.test_batching import dataset


def extension(size=2, rank=0, comm=None, **kw):
    iterator = BalancedIterator(dataset(200, 0), 8, size, rank)
    comm = comm or SimpleNamespace(size=size)
    return SpeedShares(iterator, SimpleNamespace(compute_seconds=0.0), comm, **kw)


def test_agree_moves_half_way_to_the_measured_speeds_and_keeps_every_rank_some_work():
    ext = extension()
    shares = ext.agree(np.array([3.0, 1.0]))  # from equal halves towards 3:1
    assert shares == pytest.approx([0.625, 0.375])
    ext.iterator.shares = shares
    assert ext.agree(np.array([3.0, 1.0])) == pytest.approx([0.6875, 0.3125])
    ext = extension(keep=0.0)
    fast = 1000 / 1001  # the slow rank's 1/1001 raised to an eighth (a quarter of a half)
    expected = np.array([fast, 1 / 8]) / (fast + 1 / 8)
    assert ext.agree(np.array([1000.0, 1.0])) == pytest.approx(expected)


def test_refuses_what_it_cannot_balance():
    with pytest.raises(TypeError, match="BalancedIterator"):
        SpeedShares(iter([]), SimpleNamespace(compute_seconds=0.0), SimpleNamespace(size=2))
    iterator = BalancedIterator(dataset(50, 0), 8, 2, 0)
    with pytest.raises(TypeError, match="multi-node optimizer"):
        SpeedShares(iterator, object(), SimpleNamespace(size=2))
    with pytest.raises(ValueError, match="among 2 ranks, the communicator has 3"):
        SpeedShares(iterator, SimpleNamespace(compute_seconds=0.0), SimpleNamespace(size=3))


def run(ext, trainer, seconds_per_token, steps):
    """``steps`` training steps as the updater takes them: a batch, its time, the extension."""
    for _ in range(steps):
        before = ext.iterator.tokens
        ext.iterator.next()
        ext.optimizer.compute_seconds += seconds_per_token * (ext.iterator.tokens - before)
        trainer.updater.iteration += 1
        ext(trainer)


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_a_rank_twice_as_slow_gets_a_third_of_the_tokens_on_every_rank_alike(mpi_comm):
    comm = create_communicator("ring", mpi_comm=mpi_comm)
    ext = extension(2, comm.rank, comm, every=5)
    trainer = SimpleNamespace(updater=SimpleNamespace(iteration=0))
    run(ext, trainer, 1e-4 * (1 + comm.rank), 4)  # before the first window: equal shares
    assert ext.iterator.shares is None and not ext.history
    run(ext, trainer, 1e-4 * (1 + comm.rank), 46)  # windows 5-10, 10-15, ..., 45-50
    assert len(ext.history) == 9
    assert ext.iterator.shares == pytest.approx([2 / 3, 1 / 3], abs=0.01)
    assert comm.mpi_comm.allgather(list(ext.iterator.shares))[1 - comm.rank] == \
        list(ext.iterator.shares)  # the very same numbers: both ranks deal alike
    before = ext.iterator.tokens
    run(ext, trainer, 1e-4, 10)
    tokens = comm.mpi_comm.allgather(ext.iterator.tokens - before)
    assert 0.55 < tokens[0] / sum(tokens) < 0.8  # dealt by the shares


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_a_rank_that_timed_nothing_stops_every_rank(mpi_comm):
    comm = create_communicator("ring", mpi_comm=mpi_comm)
    ext = extension(2, comm.rank, comm, every=2)
    trainer = SimpleNamespace(updater=SimpleNamespace(iteration=0))
    with pytest.raises(RuntimeError, match="timed no forward and backward"):
        run(ext, trainer, 1e-4 * comm.rank, 4)  # rank 0's work takes no time: overlap's case
