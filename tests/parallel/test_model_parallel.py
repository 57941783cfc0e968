"""The translator split across two ranks computes what the single-process translator computes.

Every rank builds the whole ``Seq2seq`` from the same seed as the reference, runs it on the same
batch, and checks the part it holds: the loss on the decoder rank, every gradient on the rank
that owns the parameter, the weights after a few Adam steps, the greedy translations.
"""

import numpy as np
import pytest

from dlhack.model.seq2seq import Seq2seq
from dlhack.parallel.model_parallel import (
    DECODER_LINKS,
    ENCODER_LINKS,
    ModelParallelSeq2seq,
    copy_weights,
    gradient_bytes,
)
from tests.model.batches import adam_side_by_side, sentence_pairs
from tests.parallel.demo import run_demo

N_SRC, N_TGT, UNITS, LAYERS = 23, 29, 16, 2


def models(comm, attention=True):
    """The whole model (the reference, on every rank) and the split one with the same weights."""
    np.random.seed(1)
    whole = Seq2seq(N_SRC, N_TGT, UNITS, LAYERS, dropout=0.0, attention=attention)
    split = ModelParallelSeq2seq(comm, N_SRC, N_TGT, UNITS, LAYERS, dropout=0.0,
                                 attention=attention)
    copy_weights(whole, split)
    return whole, split


def loss_and_grads(model, xs, ys):
    loss = model(xs, ys)
    model.cleargrads()
    loss.backward()
    return loss, {name: p.grad.copy() for name, p in model.namedparams()}


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_loss_and_every_gradient_equal_the_single_process_model(mpi_comm):
    for attention in (True, False):
        whole, split = models(mpi_comm, attention)
        xs, ys = sentence_pairs(N_SRC, N_TGT)
        want_loss, want = loss_and_grads(whole, xs, ys)
        loss, got = loss_and_grads(split, xs, ys)
        owned = mpi_comm.allgather(sorted(got))

        # The two halves hold every parameter of the whole model, each exactly once.
        assert sorted(owned[0] + owned[1]) == sorted(want)
        prefix = {0: ENCODER_LINKS, 1: DECODER_LINKS}[mpi_comm.rank]
        assert all(name.split("/")[1] in prefix for name in got)
        if mpi_comm.rank == 1:
            assert float(loss.array) == pytest.approx(float(want_loss.array), rel=1e-5)
        else:
            assert loss.shape == (0,)  # the delegate variable, not a loss
        for name, grad in got.items():
            np.testing.assert_allclose(grad, want[name], rtol=1e-4, atol=1e-6,
                                       err_msg=f"{name}, attention={attention}")


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_adam_steps_keep_the_halves_equal_to_the_whole(mpi_comm):
    whole, split = models(mpi_comm)
    adam_side_by_side((whole, split), N_SRC, N_TGT, grads=loss_and_grads)
    reference = dict(whole.namedparams())
    for name, param in split.namedparams():
        np.testing.assert_allclose(param.array, reference[name].array, rtol=1e-4, atol=1e-6,
                                   err_msg=name)


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_what_crosses_the_wire_and_translations(mpi_comm):
    """Forward: hy, cy (n_layers, B, H) and, with attention, enc (B, S, H), in float32;
    backward: the same. The greedy translations of the decoder rank are those of the whole model."""
    xs, ys = sentence_pairs(N_SRC, N_TGT, n=5)
    B, S = len(xs), max(len(x) for x in xs)
    for attention, activations in ((True, 4 * (2 * LAYERS * B * UNITS + B * S * UNITS)),
                                   (False, 4 * 2 * LAYERS * B * UNITS)):
        _, split = models(mpi_comm, attention)
        loss_and_grads(split, xs, ys)
        sent = mpi_comm.allgather((split.traffic.forward_bytes, split.traffic.backward_bytes))
        assert sent == [(activations, 0), (0, activations)], f"attention={attention}"
        # A header, then one message per array (hy, cy and enc), each way.
        assert split.traffic.messages == 1 + (3 if attention else 2), f"attention={attention}"
    whole = Seq2seq(N_SRC, N_TGT, UNITS, LAYERS)
    assert gradient_bytes(whole) == 4 * sum(p.size for p in whole.params())
    check_translations(mpi_comm)


def check_translations(mpi_comm):
    whole, split = models(mpi_comm)
    xs, _ = sentence_pairs(N_SRC, N_TGT, seed=3)
    got = split.translate(xs, max_length=6)
    if mpi_comm.rank == 0:
        assert got is None
    else:
        want = whole.translate(xs, max_length=6)
        assert [y.tolist() for y in got] == [y.tolist() for y in want]


def test_one_rank_is_refused():
    from mpi4py import MPI

    with pytest.raises(ValueError, match="two ranks"):
        ModelParallelSeq2seq(MPI.COMM_SELF, N_SRC, N_TGT, UNITS, LAYERS)


def test_the_module_docstring_command_runs():
    """``mpiexec -n 2 python -m dlhack.parallel.model_parallel --steps 3``, a little smaller."""
    stdout = run_demo("dlhack.parallel.model_parallel")
    assert "step 1: loss" in stdout
    assert "rank 0 -> 1 (activations)" in stdout
