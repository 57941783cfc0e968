"""Exercise 1 of lab 07: ``split_encode(model, comm, xs)``, the transfer between the halves.

Each rank builds the whole translator from a seed (the reference) and the split one with the same
weights, runs both on the same batch, and compares what it holds.
"""
import numpy as np
import pytest
from lab07 import batch, models, step
from labtools import draw_seed, drawn

PAD = -1  # dlhack.model.seq2seq.PAD


def run(submission, comm, seed=0, n=5):
    whole, split = models(submission.split_encode, comm)
    xs, ys = batch(seed, n)
    want_loss, want = step(whole, xs, ys)
    got_loss, got = step(split, xs, ys, encoder_rank=comm.rank == 0)
    if comm.rank == 0:
        modes = split.encoded_in
        assert modes, "rank 0 never encoded: call model.encode(xs) there"
        assert all(train for train, _ in modes), (
            "rank 0 encoded in test mode (chainer.config.train False): a training step keeps "
            "train mode, or dropout would be off in the encoder only")
    return want_loss, want, got_loss, got


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2], timeout=60)
def test_the_loss_equals_the_single_process_loss(submission, comm):
    """Rank 1 computes the single-process loss; rank 0 returns the delegate variable; on a fixed
    batch, then on a drawn one."""
    seed = draw_seed(comm)
    for k, (data, n) in enumerate(((0, 5), (seed, 2 + seed % 7))):
        want_loss, _, got_loss, _ = run(submission, comm, data, n)
        if comm.rank == 1:
            got, want = float(got_loss.array), float(want_loss.array)
            assert got == pytest.approx(want, rel=1e-5), (
                f"rank 1's loss is {got:.6f}, the single-process model's {want:.6f}: check what "
                f"rank 0 sends (hy, cy and enc, in that order) and the mask (True where xs has a "
                f"token: any id but PAD, {PAD}, id 0 included)" + (drawn(seed) if k else ""))


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2], timeout=60)
def test_every_gradient_equals_the_single_process_gradient(submission, comm):
    """Each rank's parameters get the single-process gradients, the encoder's included."""
    _, want, _, got = run(submission, comm)
    missing = [name for name, g in got.items() if g is None]
    assert not missing, (
        f"no gradient reached {', '.join(missing[:3])}: rank 0 must send the "
        f"variables hy, cy, enc themselves (not their .array) and return send()'s delegate, "
        f"whose backward() receives their gradients from rank 1")
    for name, grad in got.items():
        if not np.allclose(grad, want[name], rtol=1e-4, atol=1e-6):
            pytest.fail(f"the gradient of {name} differs from the single-process "
                        f"one (largest difference {np.abs(grad - want[name]).max():.3g})",
                        pytrace=False)
