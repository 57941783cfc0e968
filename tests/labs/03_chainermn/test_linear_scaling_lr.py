"""Exercise 4 of lab 03: ``linear_scaling_lr(base_lr, base_batchsize, batchsize, comm)``."""
import pytest
from mnlab import LabComm


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3], timeout=60)
def test_scales_with_the_effective_batch(submission, comm):
    """lr = base_lr x (batchsize x comm.size) / base_batchsize."""
    lab = LabComm(comm)
    cases = [(0.1, 32, 32), (0.1, 64, 16), (2e-3, 128, 64)]
    for base_lr, base_batchsize, batchsize in cases:
        got = submission.linear_scaling_lr(base_lr, base_batchsize, batchsize, lab)
        want = base_lr * batchsize * comm.size / base_batchsize
        hint = ""
        if isinstance(got, (int, float)) and abs(got - base_lr * batchsize / base_batchsize) < 1e-12:
            hint = (": that is the rule for one process; the effective batch (実効バッチサイズ) is "
                    "batchsize x comm.size")
        assert isinstance(got, (int, float)) and abs(got - want) <= 1e-12 * want, (
            f"linear_scaling_lr({base_lr}, {base_batchsize}, {batchsize}, comm) at {comm.size} "
            f"ranks returned {got!r}, expected {want:g}{hint}")
