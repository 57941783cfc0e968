"""Lab 3 (03_convert): the learner's train_mn.py, train_single.py converted to ChainerMN.

Each test is declared at one rank and runs the script itself at 1, 2 and 3 ranks (convert.py,
observe.py): 47 training sentences (padded shards at 2 and 3 ranks), 60 dev sentences, 16 units,
batch 4 per rank, 4 iterations, float64 and no dropout. Each message names the edit to look at.
"""
import numpy as np
import pytest
from convert import (
    BATCH,
    EDITS,
    ITERATIONS,
    RANKS,
    REPORTS,
    SCRIPT,
    fail,
    first_difference,
    learner_job,
    prefetch,
    ranks_text,
    reference,
    replay,
)

TIMEOUT = 600  # s: up to six jobs of a few seconds each (and waits for other tests' jobs)


@pytest.fixture(scope="module", autouse=True)
def jobs_started(submission):
    """Every job of this file, started at once in the background (two at a time)."""
    prefetch(submission)


def finished(submission, n):
    """The learner's training run at ``n`` ranks, which must have ended cleanly."""
    job = learner_job(submission, n)
    problem = job.problem()
    if problem:
        fail(problem)
    return job


def first_event(record, kinds):
    return next((i for i, e in enumerate(record["events"]) if e[0] in kinds), None)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_communicator(submission):
    """A ChainerMN communicator on every rank: naive on CPU, a GPU one (pure_nccl) with --gpu."""
    for n in RANKS:
        job = finished(submission, n)
        for rank, rec in enumerate(job.records):
            names = [e[1] for e in rec["events"] if e[0] == "communicator"]
            if not names:
                fail(f"{EDITS[1]}: at {ranks_text(n)}, rank {rank} never called "
                     f"chainermn.create_communicator (import chainermn, not dlhack.parallel)")
            if names[0] != "naive":
                fail(f"{EDITS[1]}: on CPU rank {rank} asked for the {names[0]!r} communicator; "
                     f"without --gpu use 'naive' (ChainerMN's CPU communicator)")
    job = learner_job(submission, 2, gpu=True)
    if job.problem():
        fail(f"with --gpu (GPUs simulated on CPU) {job.problem()}")
    for rank, rec in enumerate(job.records):
        names = [e[1] for e in rec["events"] if e[0] == "communicator"]
        if not names or names[0] in ("naive", "flat_cpu"):
            fail(f"{EDITS[1]}: with --gpu at 2 ranks, rank {rank} asked for "
                 f"{names[0] if names else 'no'!r} communicator; on GPUs use 'pure_nccl' (NCCL; "
                 f"'naive' would hand device pointers to MPI, which needs a CUDA-aware MPI)")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_device_from_intra_rank(submission):
    """With --gpu (simulated on CPU): the communicator first, then GPU intra_rank, then the model."""
    job = learner_job(submission, 2, gpu=True)
    if job.problem():
        fail(f"with --gpu (GPUs simulated on CPU) {job.problem()}")
    for rank, rec in enumerate(job.records):
        comm = first_event(rec, ("communicator",))
        device = first_event(rec, ("device", "to_device"))
        moved = first_event(rec, ("to_device",))
        if comm is None:
            fail(f"{EDITS[1]}: rank {rank} never created a ChainerMN communicator")
        if moved is not None and moved < comm:
            fail(f"{EDITS[2]}: with --gpu at 2 ranks, rank {rank} moved the model to "
                 f"{rec['events'][moved][1]} before the communicator was created: create the "
                 f"communicator first, so that the device can come from comm.intra_rank")
        if device is not None and device < comm:
            fail(f"{EDITS[2]}: with --gpu at 2 ranks, rank {rank} chose a device "
                 f"({rec['events'][device][1]}) before the communicator was created: create "
                 f"the communicator first, then take the device from comm.intra_rank")
        intra = rec["events"][comm][2]
        want = f"@cupy:{intra}"
        gpus = [e[1] for e in rec["events"] if e[0] == "device" and e[1].startswith("@cupy")]
        targets = [e[1] for e in rec["events"] if e[0] == "to_device"]
        if not gpus or gpus[0] != want:
            fail(f"{EDITS[2]}: with --gpu at 2 ranks, rank {rank} (intra_rank {intra}) chose "
                 f"{gpus[0] if gpus else 'no GPU'}; it should use {want}: "
                 f"chainer.get_device(f'@cupy:{{comm.intra_rank}}'), so that each rank of a node "
                 f"has its own GPU (simulated on CPU)")
        if want not in targets:
            fail(f"{EDITS[2]}: with --gpu at 2 ranks, rank {rank} never moved the model to {want} "
                 f"(model.to_device(device))")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_every_sentence_once_per_epoch(submission):
    """Across the ranks, every training sentence once per epoch (plus the padding of equal shards)."""
    full = [tuple(map(tuple, pair)) for pair in reference().records[0]["dataset"]]
    want = {pair: full.count(pair) for pair in full}
    for n in RANKS:
        job = finished(submission, n)
        shards = [[tuple(map(tuple, p)) for p in rec["dataset"]] for rec in job.records]
        sizes = [len(s) for s in shards]
        got = {}
        for shard in shards:
            for pair in shard:
                got[pair] = got.get(pair, 0) + 1
        foreign = [p for p in got if p not in want]
        missing = sum(max(0, k - got.get(p, 0)) for p, k in want.items())
        extra = sum(sizes) - len(full)
        if foreign:
            fail(f"{EDITS[4]}: at {ranks_text(n)} the ranks train on sentences that are not in "
                 f"the training set")
        if n > 1 and all(s >= len(full) for s in sizes):
            fail(f"{EDITS[4]}: at {ranks_text(n)} every rank trains on all {len(full)} "
                 f"sentences, so each epoch uses each sentence {n} times: give each rank its "
                 f"shard with chainermn.scatter_dataset")
        if missing:
            fail(f"{EDITS[4]}: at {ranks_text(n)}, {missing} of the {len(full)} training "
                 f"sentences are on no rank (shards of {sizes}): scatter the whole training set")
        if len(set(sizes)) > 1:
            fail(f"{EDITS[4]}: at {ranks_text(n)} the shards have {sizes} sentences: ranks would "
                 f"run different numbers of iterations per epoch; keep scatter_dataset's "
                 f"force_equal_length=True (its default)")
        if extra >= n:
            fail(f"{EDITS[4]}: at {ranks_text(n)} the shards hold {sum(sizes)} sentences for "
                 f"{len(full)}: {extra} repeated, but equal shards need fewer than {n} repeats")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_identical_parameters(submission):
    """Every rank ends with the same parameters, even when they start from different ones."""
    for n in RANKS[1:]:
        job = finished(submission, n)
        final0 = job.params(0, "final")
        for rank in range(1, n):
            diff = first_difference(final0, job.params(rank, "final"), rtol=0, atol=0)
            if diff is None:
                continue
            name, by = diff
            if first_difference(job.params(0, "grad"), job.params(rank, "grad"), rtol=0, atol=0):
                why = ("the ranks' gradients were not averaged before the update: wrap the "
                       "optimizer with chainermn.create_multi_node_optimizer(optimizer, comm)")
            elif first_difference(job.params(0, "first"), job.params(rank, "first"), 0, 0):
                why = ("rank 0's initial weights were never broadcast (the grader gave each "
                       "rank different ones, as an unseeded run would): the multi-node optimizer "
                       "broadcasts them at its first update")
            else:
                why = "something other than the averaged gradient changes the weights"
            fail(f"{EDITS[3]}: at {ranks_text(n)}, after {ITERATIONS} iterations rank {rank}'s "
                 f"{name} differs from rank 0's (by up to {by:.3g}): {why}")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_same_as_one_process_with_n_times_the_batch(submission):
    """N ranks with batch b train as one process with batch N*b on the same sentences."""
    for n in RANKS:
        job = finished(submission, n)
        for rank in range(n):
            sizes = job.records[rank]["batch_sizes"]
            if max(sizes) != BATCH:
                fail(f"the per-rank batch: at {ranks_text(n)} rank {rank}'s batches have up to "
                     f"{max(sizes)} sentences; with --batchsize {BATCH} each rank's batch is "
                     f"{BATCH} (the effective batch is {BATCH} x {n}): do not divide it")
        ref = replay(job)
        diff = first_difference(job.params(0, "final"), ref.params(0, "final"))
        if diff:
            name, by = diff
            fail(f"{EDITS[3]}: at {ranks_text(n)}, after {ITERATIONS} iterations rank 0's {name} "
                 f"differs (by up to {by:.3g}) from one process trained with batch {n} x {BATCH} "
                 f"on the same sentences from rank 0's initial weights (skipping the first "
                 f"batch, since ChainerMN's first update only broadcasts): the multi-node "
                 f"optimizer must average the gradients of every step")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_validation_loss_over_the_whole_dev_set(submission):
    """Every rank reports the validation loss of one process over the whole dev set."""
    ref = reference().records[0]["validation"]
    want = {k: v for ev in ref.values() for k, v in ev.items()}["validation/main/loss"]
    for n in RANKS:
        job = finished(submission, n)
        for rank, rec in enumerate(job.records):
            if not rec["validation"]:
                fail(f"{EDITS[5]}: at {ranks_text(n)} rank {rank} has no Evaluator extension: "
                     f"every rank runs the (multi-node) evaluator")
            losses = [v for ev in rec["validation"].values() for k, v in ev.items()
                      if k.endswith("/main/loss")]
            if not losses or not np.isclose(losses[0], want, rtol=1e-9, atol=0):
                got = f"{losses[0]:.6f}" if losses else "no main/loss"
                fail(f"{EDITS[5]}: at {ranks_text(n)} rank {rank} reports a validation loss of "
                     f"{got}, but one process scores the whole dev set (on the same weights) "
                     f"at {want:.6f}: wrap the Evaluator with "
                     f"chainermn.create_multi_node_evaluator(evaluator, comm), and scatter the "
                     f"dev set (its 60 sentences split equally, so the mean of the ranks' means "
                     f"is exact)")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_only_rank_0_reports(submission):
    """Rank 0 writes the log and the snapshot; the other ranks report and write nothing."""
    for n in RANKS:
        job = finished(submission, n)
        written0 = {p.name for p in job.out(0).rglob("*") if p.is_file()}
        if "log" not in written0 or not any(w.startswith("snapshot") for w in written0):
            fail(f"{EDITS[6]}: at {ranks_text(n)} rank 0 wrote {sorted(written0) or 'nothing'}; "
                 f"it should still write the log (LogReport) and the snapshot")
        for rank in range(1, n):
            reports = sorted(name for name, kind in job.records[rank]["extensions"].items()
                             if kind in REPORTS)
            written = sorted(p.name for p in job.out(rank).rglob("*") if p.is_file())
            if written or reports:
                what = ", ".join(written + [f"the {r} extension" for r in reports])
                fail(f"{EDITS[6]}: at {ranks_text(n)} rank {rank} has {what}: "
                     f"only rank 0 logs, prints and snapshots (`if comm.rank == 0:`)")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_ends_cleanly(submission):
    """The job ends with every rank at the end of the script and mpiexec's status 0."""
    for n in RANKS:
        finished(submission, n)
    job = learner_job(submission, 2, gpu=True)
    if job.records and all(rec and not rec["error"] for rec in job.records) and job.rc != 0:
        fail(f"with --gpu (simulated on CPU) {SCRIPT} exited with status {job.rc}")
