"""The output layer split over ranks computes what one process computes, with the messages the
module docstring states.

Every rank builds the one-process ``Seq2seq`` and the ``TensorParallelSeq2seq`` from the same
seed and runs both on the same batch: the loss on every rank, every replicated gradient, and
each rank's rows of ``W_o`` and of its gradient must match. The target vocabulary has 29 words,
so 3 ranks split it unevenly (10, 10, 9) and 4 ranks (8, 7, 7, 7).
"""
import itertools

import chainer
import chainer.functions as F
import numpy as np
import pytest

from dlhack.model.seq2seq import PAD, Seq2seq
from dlhack.parallel.counting import CountingComm
from dlhack.parallel.tensor_parallel import (
    TensorParallelSeq2seq,
    vocab_parallel_cross_entropy,
    vocab_range,
)
from tests.model.batches import adam_side_by_side, sentence_pairs
from tests.parallel.demo import run_demo

N_SRC, N_TGT, UNITS, LAYERS = 23, 29, 16, 2
SLICED = ("/W_o/W", "/W_o/b")  # the parameters split by rows of the vocabulary


@pytest.mark.parametrize("n_vocab", [1, 2, 7, 29, 30, 64])
def test_vocab_range_cuts_the_vocabulary_into_contiguous_near_equal_slices(n_vocab):
    for size in range(1, min(n_vocab, 6) + 1):
        ranges = [vocab_range(n_vocab, rank, size) for rank in range(size)]
        assert ranges[0][0] == 0 and ranges[-1][1] == n_vocab
        assert all(a[1] == b[0] for a, b in itertools.pairwise(ranges)), ranges
        lengths = [stop - start for start, stop in ranges]
        assert max(lengths) - min(lengths) <= 1 and lengths == sorted(lengths, reverse=True)


def models(comm, attention=True, dropout=0.0):
    """The one-process model and the split one, each built after ``np.random.seed(1)``."""
    np.random.seed(1)
    whole = Seq2seq(N_SRC, N_TGT, UNITS, LAYERS, dropout=dropout, attention=attention)
    np.random.seed(1)
    split = TensorParallelSeq2seq(comm, N_SRC, N_TGT, UNITS, LAYERS, dropout=dropout,
                                  attention=attention)
    return whole, split


def loss_and_grads(model, xs, ys, seed=2):
    np.random.seed(seed)  # the same dropout masks in both models, on every rank
    loss = model(xs, ys)
    model.cleargrads()
    loss.backward()
    return float(loss.array), {name: p.grad.copy() for name, p in model.namedparams()}


def mine(split, name, array):
    """This rank's part of a parameter (or gradient) of the one-process model."""
    return array[split.vocab_start:split.vocab_stop] if name in SLICED else array


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_cross_entropy_equals_chainers_over_the_whole_vocabulary(mpi_comm):
    """Random logits, some large enough that exp overflows without the shared max, targets in
    every rank's slice and PAD: the same losses and gradients as F.softmax_cross_entropy."""
    rng = np.random.RandomState(0)
    N = 40
    logits = rng.standard_normal((N, N_TGT)).astype(np.float32) * 3
    logits[::4] += 100  # exp(100) is inf in float32: every rank must subtract the same max
    t = rng.randint(0, N_TGT, size=N).astype(np.int32)
    t[::7] = PAD
    gy = rng.standard_normal(N).astype(np.float32)
    whole = chainer.Variable(logits)
    want = F.softmax_cross_entropy(whole, t, reduce="no", ignore_label=PAD)
    want.grad = gy
    want.backward()
    start, stop = vocab_range(N_TGT, mpi_comm.rank, mpi_comm.size)
    part = chainer.Variable(logits[:, start:stop].copy())
    got = vocab_parallel_cross_entropy(part, t, mpi_comm, start)
    got.grad = gy
    got.backward()
    np.testing.assert_allclose(got.array, want.array, rtol=1e-5, atol=1e-5)
    assert np.all(got.array[t == PAD] == 0)
    np.testing.assert_allclose(part.grad, whole.grad[:, start:stop], rtol=1e-5, atol=1e-6)


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=90)
def test_loss_and_every_gradient_equal_the_single_process_model(mpi_comm):
    for attention, dropout in ((True, 0.0), (False, 0.0), (True, 0.3)):
        whole, split = models(mpi_comm, attention, dropout)
        assert split.W_o.W.shape == (split.vocab_stop - split.vocab_start, UNITS)
        rows = mpi_comm.allgather(split.W_o.W.array)
        np.testing.assert_array_equal(np.concatenate(rows), whole.W_o.W.array)
        xs, ys = sentence_pairs(N_SRC, N_TGT)
        want_loss, want = loss_and_grads(whole, xs, ys)
        loss, got = loss_and_grads(split, xs, ys)
        where = f"attention={attention}, dropout={dropout}, rank {mpi_comm.rank}"
        assert sorted(got) == sorted(want), where
        assert loss == pytest.approx(want_loss, rel=1e-5), where
        for name, grad in got.items():
            np.testing.assert_allclose(grad, mine(split, name, want[name]), rtol=1e-4,
                                       atol=1e-6, err_msg=f"{name}, {where}")


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=90)
def test_adam_steps_keep_every_rank_equal_to_one_process(mpi_comm):
    whole, split = models(mpi_comm)
    adam_side_by_side((whole, split), N_SRC, N_TGT, grads=loss_and_grads)
    reference = dict(whole.namedparams())
    for name, param in split.namedparams():
        np.testing.assert_allclose(param.array, mine(split, name, reference[name].array),
                                   rtol=1e-4, atol=1e-6, err_msg=name)


@pytest.mark.mpi(ranks=[2, 3], timeout=90)
def test_messages_per_step_and_translations(mpi_comm):
    """Forward: 3 allreduces of N elements; backward: 1 of N x H (the features' gradient).
    Greedy translation gathers the logits and picks what one process picks."""
    counting = CountingComm(mpi_comm)
    whole, split = models(counting)
    xs, ys = sentence_pairs(N_SRC, N_TGT, n=5)
    N = len(xs) * (max(len(y) for y in ys) + 1)  # target positions, <eos> included
    counting.reset()
    loss_and_grads(split, xs, ys)
    calls, sent = counting.reset()
    assert dict(calls) == {"Allreduce": 4}
    assert sent["Allreduce"] == 4 * (3 * N + N * UNITS)
    assert counting.totals() == (0, 0)

    xs, _ = sentence_pairs(N_SRC, N_TGT, seed=3)
    got = split.translate(xs, max_length=6)
    want = whole.translate(xs, max_length=6)
    assert [y.tolist() for y in got] == [y.tolist() for y in want]
    calls, _ = counting.reset()
    assert set(calls) == {"allgather"} and 1 <= calls["allgather"] <= 6


@pytest.mark.mpi(ranks=[3], timeout=60)
def test_more_ranks_than_words_is_refused(mpi_comm):
    with pytest.raises(ValueError, match="cannot be split over 3 ranks"):
        TensorParallelSeq2seq(mpi_comm, N_SRC, 2, UNITS, LAYERS)


def test_the_module_docstring_command_runs():
    """``mpiexec -n 2 python -m dlhack.parallel.tensor_parallel --steps 3``, a little smaller."""
    stdout = run_demo("dlhack.parallel.tensor_parallel")
    lines = [line for line in stdout.splitlines() if line.startswith("step ")]
    assert len(lines) == 2, stdout
    for line in lines:  # "step 0: loss 55.12345 on 2 ranks, 55.12345 in one process; 4 messages"
        words = line.replace(",", "").split()
        assert words[3] == words[7], line
        assert "4 messages" in line, line
