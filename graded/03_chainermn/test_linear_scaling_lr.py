"""Exercise 4 of lab 03: ``linear_scaling_lr(base_lr, base_batchsize, batchsize, comm)``.

``batchsize`` is this rank's own batch, and the ranks' batches differ (the last shard of an epoch
is short; ranks on smaller devices take smaller batches): the effective batch is their total,
which no rank knows without asking the others. Every rank must return the same rate. Beside the
fixed cases, one case comes from the grader's draw for the launch (printed when it fails). The
ranks observe the rates; the grader decides.
"""
import pytest
from mnlab import LabComm

CASES = {  # name -> (base_lr, base_batchsize, this rank's batch at rank r of size)
    "batches of 8, 16, 24... growing with the rank": (2e-3, 128, lambda r, size: 8 * (r + 1)),
    "the last rank with a short batch of 16, the others 64": (
        0.1, 64, lambda r, size: 16 if r == size - 1 else 64),
    "every rank with a batch of 32": (0.1, 32, lambda r, size: 32),
}


def cases(seed):
    """The fixed cases and the drawn one."""
    def drawn_batch(r, size):  # 1..100 sentences, other on every rank
        return 1 + (seed // (r + 1) + 37 * r) % 100

    return {**CASES, f"batches drawn from seed {seed}": (
        0.05 + seed % 7 / 10, 16 + seed % 113, drawn_batch)}


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
    if near(base_lr * max(batches) * size / base_batchsize):
        return (": that is the largest batch x comm.size, which counts a short batch as full; add "
                "up the ranks' own batches")
    if near(base_lr * batches[0] * size / base_batchsize):
        return (": that is rank 0's batch x comm.size, which assumes every rank has rank 0's "
                "batch; add up the ranks' own batches")
    if near(base_lr * sum(batches) / mine):
        return (": that divides by this rank's batch, not base_batchsize, so ranks with other "
                "batches get other rates; divide by base_batchsize")
    return ""


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_scales_with_the_total_batch_of_all_ranks(submission, comm, observe, seed):
    """lr = base_lr x (sum of every rank's batch) / base_batchsize, the same on every rank."""
    lab = LabComm(comm)
    got = {}
    for name, (base_lr, base_batchsize, batch_of) in cases(seed).items():
        got[name] = submission.linear_scaling_lr(base_lr, base_batchsize,
                                                 batch_of(comm.rank, comm.size), lab)
    observe(got=got)


def check_scales_with_the_total_batch_of_all_ranks(obs, run):
    for name, (base_lr, base_batchsize, batch_of) in cases(run.seed).items():
        batches = [batch_of(r, run.size) for r in range(run.size)]
        mine = batches[run.rank]
        got = obs["got"].get(name)
        want = base_lr * sum(batches) / base_batchsize
        if not isinstance(got, (int, float)) or isinstance(got, bool):
            kind = getattr(got, "type_name", type(got).__name__)
            return f"with {name}, linear_scaling_lr returned a {kind}, not a number"
        if abs(got - want) > 1e-12 * want:
            return (f"with {name} (batches {batches}), linear_scaling_lr(base_lr={base_lr}, "
                    f"base_batchsize={base_batchsize}, batchsize={mine}, comm) on rank {run.rank} "
                    f"returned {got!r}, expected {want:g}"
                    + hint(got, base_lr, base_batchsize, mine, batches, run.size))
    return None
