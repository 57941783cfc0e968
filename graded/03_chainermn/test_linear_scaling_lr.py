"""Exercise 4 of lab 03: ``linear_scaling_lr(base_lr, base_batchsize, batchsize, comm)``.

``batchsize`` is this rank's own batch, and the ranks' batches differ (the last shard of an epoch
is short; ranks on smaller devices take smaller batches): the effective batch is their total,
which no rank knows without asking the others. Every rank must return the same rate. Beside the
fixed cases, each grading draws one (batches and base values, printed when it fails).
"""
import pytest
from mnlab import LabComm, drawn

CASES = {  # name -> (base_lr, base_batchsize, this rank's batch at rank r of size)
    "the last rank with a short batch of 16, the others 64": (
        0.1, 64, lambda r, size: 16 if r == size - 1 else 64),
    "batches of 8, 16, 24... growing with the rank": (2e-3, 128, lambda r, size: 8 * (r + 1)),
    "every rank with a batch of 32": (0.1, 32, lambda r, size: 32),
}


def hint(got, base_lr, base_batchsize, mine, batches, size):
    """What a wrong rate most likely computed ('' when unknown)."""
    def near(value):
        return abs(got - value) <= 1e-9 * abs(value)

    if near(base_lr * mine * size / base_batchsize):
        return (": that is this rank's batch x comm.size, which assumes every rank has the same "
                "batch; add up the ranks' own batches (one collective on comm.mpi_comm)")
    if near(base_lr * mine / base_batchsize):
        return ": that is the rule for this rank's batch alone; the effective batch is every rank's"
    if near(base_lr * sum(batches) / size / base_batchsize):
        return ": that uses the mean batch over the ranks; the effective batch is their sum"
    if near(base_lr * sum(batches)):
        return ": the rate scales with effective batch / base_batchsize: divide by base_batchsize"
    if near(base_lr * (sum(batches) // base_batchsize)):
        return ": integer division (//) rounds the ratio down; use /"
    return ""


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_scales_with_the_total_batch_of_all_ranks(submission, comm):
    """lr = base_lr x (sum of every rank's batch) / base_batchsize, the same on every rank."""
    lab = LabComm(comm)
    seed = drawn(comm, 0, 2 ** 31)

    def drawn_batch(r, size, seed=seed):  # 1..100 sentences, other on every rank
        return 1 + (seed // (r + 1) + 37 * r) % 100

    cases = dict(CASES)
    cases[f"batches drawn from seed {seed}"] = (0.05 + seed % 7 / 10, 16 + seed % 113, drawn_batch)
    for name, (base_lr, base_batchsize, batch_of) in cases.items():
        batches = [batch_of(r, comm.size) for r in range(comm.size)]
        mine = batches[comm.rank]
        got = submission.linear_scaling_lr(base_lr, base_batchsize, mine, lab)
        want = base_lr * sum(batches) / base_batchsize
        assert isinstance(got, (int, float)), (
            f"with {name}, linear_scaling_lr returned a {type(got).__name__}, not a number")
        assert abs(got - want) <= 1e-12 * want, (
            f"with {name} (batches {batches}), linear_scaling_lr(base_lr={base_lr}, "
            f"base_batchsize={base_batchsize}, batchsize={mine}, comm) on rank {comm.rank} returned "
            f"{got!r}, expected {want:g}" + hint(got, base_lr, base_batchsize, mine, batches,
                                                 comm.size))
