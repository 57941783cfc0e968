"""Lab 3 (03_convert): the learner's train_mn.py, train_single.py converted to ChainerMN.

Each test is declared at one rank and runs the script itself at 1, 2 and 3 ranks on one node and
at 4 ranks on two simulated nodes (convert.py's LAYOUTS, observe.py): 47 training sentences
(padded shards at 2, 3 and 4 ranks), 60 dev sentences, 16 units, batch 4 per rank, 4 iterations,
float64 and no dropout. The --gpu start runs at 2 nodes x 2 ranks, in blocks and round-robin.
What is checked is every choice a rank makes (each device, each writer) and what is meant (the
sentences each rank trained on and evaluated), not the first or the mean. Each message names the
edit to look at.
"""
import numpy as np
import pytest
from convert import (
    BATCH,
    EDITS,
    GPU_LAYOUTS,
    ITERATIONS,
    LAYOUTS,
    N_DEV,
    REPORTS,
    SCRIPT,
    check_jobs,
    fail,
    first_difference,
    observe_jobs,
    prefetch,
    ranks_text,
)

TIMEOUT = 600  # s: up to six jobs of a few seconds each (and waits for other tests' jobs)


@pytest.fixture(scope="module", autouse=True)
def jobs_started(submission):
    """Every job of this file, started at once in the background (two at a time)."""
    prefetch(submission)


def finished(jobs, n, hosts=None, gpu=False):
    """The learner's training run (or --gpu start) at ``n`` ranks on ``hosts``, which must have
    ended cleanly."""
    job = jobs.learner(n, gpu=gpu, hosts=hosts)
    problem = job.problem()
    if problem:
        fail(f"with --gpu (GPUs simulated on CPU) {problem}" if gpu else problem)
    return job


def intra_rank(record):
    """The intra_rank ChainerMN gave this rank (None without a communicator)."""
    made = [e for e in record["events"] if e[0] == "communicator"]
    return made[0][2] if made else None


def first_event(record, kinds):
    return next((i for i, e in enumerate(record["events"]) if e[0] in kinds), None)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_communicator(submission, observe):
    """A ChainerMN communicator on every rank: naive on CPU, a GPU one (pure_nccl) with --gpu."""
    observe_jobs(submission, communicator, observe)


def check_communicator(obs, run):
    return check_jobs(obs, communicator)


def communicator(jobs):
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        for rank, rec in enumerate(job.records):
            names = [e[1] for e in rec["events"] if e[0] == "communicator"]
            if not names:
                fail(f"{EDITS[1]}: at {ranks_text(n, hosts)}, rank {rank} never called "
                     f"chainermn.create_communicator (import chainermn, not dlhack.parallel)")
            if names[0] != "naive":
                fail(f"{EDITS[1]}: on CPU rank {rank} asked for the {names[0]!r} communicator; "
                     f"without --gpu use 'naive' (ChainerMN's CPU communicator)")
    for n, hosts in GPU_LAYOUTS:
        job = finished(jobs, n, hosts, gpu=True)
        for rank, rec in enumerate(job.records):
            names = [e[1] for e in rec["events"] if e[0] == "communicator"]
            if not names or names[0] in ("naive", "flat_cpu"):
                fail(f"{EDITS[1]}: with --gpu at {ranks_text(n, hosts)}, rank {rank} asked for "
                     f"{names[0] if names else 'no'!r} communicator; on GPUs use 'pure_nccl' "
                     f"(NCCL; 'naive' would hand device pointers to MPI, which needs a CUDA-aware "
                     f"MPI)")


def device_hint(got, rank, intra):
    """Why a rank may have chosen ``got`` instead of its intra_rank's GPU."""
    if got == f"@cupy:{rank}" and rank != intra:
        return (" (its global rank: on a second node, GPU numbers start again at 0, and this "
                "node may have no GPU with that number)")
    if got == "@cupy:0" and intra != 0:
        return " (GPU 0, train_single.py's: every rank of the node would share it)"
    return ""


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_device_from_intra_rank(submission, observe):
    """With --gpu on 2 nodes x 2 ranks (simulated): the communicator first, then GPU intra_rank
    for the model, the updater and every evaluator, and no other GPU ever chosen."""
    observe_jobs(submission, device_from_intra_rank, observe)


def check_device_from_intra_rank(obs, run):
    return check_jobs(obs, device_from_intra_rank)


def device_from_intra_rank(jobs):
    for n, hosts in GPU_LAYOUTS:
        job = finished(jobs, n, hosts, gpu=True)
        where = f"with --gpu at {ranks_text(n, hosts)}"
        for rank, rec in enumerate(job.records):
            comm = first_event(rec, ("communicator",))
            device = first_event(rec, ("device", "to_device"))
            moved = first_event(rec, ("to_device",))
            if comm is None:
                fail(f"{EDITS[1]}: rank {rank} never created a ChainerMN communicator")
            if moved is not None and moved < comm:
                fail(f"{EDITS[2]}: {where}, rank {rank} moved the model to "
                     f"{rec['events'][moved][1]} before the communicator was created: create the "
                     f"communicator first, so that the device can come from comm.intra_rank")
            if device is not None and device < comm:
                fail(f"{EDITS[2]}: {where}, rank {rank} chose a device "
                     f"({rec['events'][device][1]}) before the communicator was created: create "
                     f"the communicator first, then take the device from comm.intra_rank")
            intra = intra_rank(rec)
            want = f"@cupy:{intra}"
            gpus = [e[1] for e in rec["events"] if e[0] == "device" and e[1].startswith("@cupy")]
            if not gpus:
                fail(f"{EDITS[2]}: {where}, rank {rank} (intra_rank {intra}) chose no GPU; it "
                     f"should use {want}: chainer.get_device(f'@cupy:{{comm.intra_rank}}')")
            chosen = {  # what each part of the training uses first, then every choice made
                **{f"the {what}'s device": got for what, got in rec["devices"].items()
                   if got is not None or what in ("model", "updater")
                   or what.startswith("evaluator")},
                **{f"the model's move ({k + 1})": e[1] for k, e in enumerate(
                    e for e in rec["events"] if e[0] == "to_device")},
                **{f"the device it chose ({k + 1} of {len(gpus)})": g for k, g in enumerate(gpus)}}
            for what, got in chosen.items():
                if got != want:
                    used = got or "no device (its arrays stay on the CPU)"
                    fail(f"{EDITS[2]}: {where}, rank {rank} (intra_rank {intra}) uses {used} for "
                         f"{what}{device_hint(got, rank, intra)}; every device of a rank is "
                         f"{want}: take it once, chainer.get_device(f'@cupy:{{comm.intra_rank}}'), "
                         f"and pass that one device to model.to_device, the updater and the "
                         f"evaluator")
            if want not in [e[1] for e in rec["events"] if e[0] == "to_device"]:
                fail(f"{EDITS[2]}: {where}, rank {rank} never moved the model to {want} "
                     f"(model.to_device(device))")


def as_pairs(sentences):
    return [tuple(map(tuple, pair)) for pair in sentences]


def contiguous_in_order(shard, full):
    """Whether ``shard`` is a run of consecutive sentences of ``full``, in ``full``'s order."""
    if not shard:
        return True
    return any(full[b:b + len(shard)] == shard for b, pair in enumerate(full) if pair == shard[0])


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_every_sentence_once_per_epoch(submission, observe):
    """Across the ranks, every training sentence once per epoch (plus the padding of equal
    shards), dealt in a shuffled order."""
    observe_jobs(submission, every_sentence_once_per_epoch, observe)


def check_every_sentence_once_per_epoch(obs, run):
    return check_jobs(obs, every_sentence_once_per_epoch)


def every_sentence_once_per_epoch(jobs):
    full = as_pairs(jobs.reference().records[0]["dataset"])
    want = {pair: full.count(pair) for pair in full}
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        at = f"at {ranks_text(n, hosts)}"
        shards = [as_pairs(rec["dataset"]) for rec in job.records]
        sizes = [len(s) for s in shards]
        got = {}
        for shard in shards:
            for pair in shard:
                got[pair] = got.get(pair, 0) + 1
        foreign = [p for p in got if p not in want]
        missing = sum(max(0, k - got.get(p, 0)) for p, k in want.items())
        extra = sum(sizes) - len(full)
        if foreign:
            fail(f"{EDITS[4]}: {at} the ranks train on sentences that are not in the training set")
        if n > 1 and all(s >= len(full) for s in sizes):
            fail(f"{EDITS[4]}: {at} every rank trains on all {len(full)} sentences, so each epoch "
                 f"uses each sentence {n} times: give each rank its shard with "
                 f"chainermn.scatter_dataset")
        if missing:
            fail(f"{EDITS[4]}: {at}, {missing} of the {len(full)} training sentences are on no "
                 f"rank (shards of {sizes}): scatter the whole training set")
        if len(set(sizes)) > 1:
            fail(f"{EDITS[4]}: {at} the shards have {sizes} sentences: ranks would run different "
                 f"numbers of iterations per epoch; keep scatter_dataset's "
                 f"force_equal_length=True (its default)")
        if extra >= n:
            fail(f"{EDITS[4]}: {at} the shards hold {sum(sizes)} sentences for {len(full)}: "
                 f"{extra} repeated, but equal shards need fewer than {n} repeats")
        if n > 1 and all(contiguous_in_order(shard, full) for shard in shards):
            fail(f"{EDITS[4]}: {at} each rank's shard is a run of consecutive sentences of the "
                 f"training set, in its order: deal them shuffled, "
                 f"chainermn.scatter_dataset(train, comm, shuffle=True, seed=0), so that no rank "
                 f"trains on one end of a corpus that is sorted (by length, by source...)")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_identical_parameters(submission, observe):
    """Every rank ends with the same parameters, even when they start from different ones."""
    observe_jobs(submission, identical_parameters, observe)


def check_identical_parameters(obs, run):
    return check_jobs(obs, identical_parameters)


def identical_parameters(jobs):
    for n, hosts in LAYOUTS:
        if n == 1:
            continue
        job = finished(jobs, n, hosts)
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
            fail(f"{EDITS[3]}: at {ranks_text(n, hosts)}, after {ITERATIONS} iterations rank "
                 f"{rank}'s {name} differs from rank 0's (by up to {by:.3g}): {why}")


def batches_problem(job, n, hosts):
    """None when every rank made ITERATIONS updates on batches of BATCH sentences; else what
    differs, blaming the edit that makes it differ (not the multi-node optimizer)."""
    at = f"at {ranks_text(n, hosts)}"
    per_rank = [job.records[rank]["batch_sizes"] for rank in range(n)]
    for rank, sizes in enumerate(per_rank):
        if len(sizes) != ITERATIONS:
            return (f"the training length: {at} rank {rank} made {len(sizes)} updates, but "
                    f"--iterations {ITERATIONS} asks each rank for {ITERATIONS}: keep the "
                    f"trainer's stop trigger (args.iterations, 'iteration') as it is")
        if max(sizes) != BATCH:
            return (f"the per-rank batch: {at} rank {rank}'s batches have up to {max(sizes)} "
                    f"sentences; with --batchsize {BATCH} each rank's batch is {BATCH} (the "
                    f"effective batch is {BATCH} x {n}): do not divide it")
    for step in range(ITERATIONS):
        sizes = [per_rank[rank][step] for rank in range(n)]
        if len(set(sizes)) > 1:
            return (f"{EDITS[4]}: {at}, at update {step + 1} the ranks' batches held {sizes} "
                    f"sentences: a rank whose shard is shorter ends its epoch with a short batch, "
                    f"so the mean of the ranks' gradients is not the gradient of their union. "
                    f"Keep scatter_dataset's force_equal_length=True (its default), so that "
                    f"every shard has the same length")
    return None


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_same_as_one_process_with_n_times_the_batch(submission, observe):
    """N ranks with batch b train as one process with batch N*b on the same sentences."""
    observe_jobs(submission, same_as_one_process_with_n_times_the_batch, observe)


def check_same_as_one_process_with_n_times_the_batch(obs, run):
    return check_jobs(obs, same_as_one_process_with_n_times_the_batch)


def same_as_one_process_with_n_times_the_batch(jobs):
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        problem = batches_problem(job, n, hosts)
        if problem:
            fail(problem)
        ref = jobs.replay(job)
        diff = first_difference(job.params(0, "final"), ref.params(0, "final"))
        if diff:
            name, by = diff
            fail(f"{EDITS[3]}: at {ranks_text(n, hosts)}, after {ITERATIONS} iterations rank 0's "
                 f"{name} differs (by up to {by:.3g}) from one process trained with batch "
                 f"{n} x {BATCH} on the same sentences from rank 0's initial weights (skipping "
                 f"the first batch, since ChainerMN's first update only broadcasts): the "
                 f"multi-node optimizer must average the gradients of every step")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_validation_loss_over_the_whole_dev_set(submission, observe):
    """Every rank reports the validation loss of one process over the whole dev set, each
    evaluating its own share of the dev sentences."""
    observe_jobs(submission, validation_loss_over_the_whole_dev_set, observe)


def check_validation_loss_over_the_whole_dev_set(obs, run):
    return check_jobs(obs, validation_loss_over_the_whole_dev_set)


def validation_loss_over_the_whole_dev_set(jobs):
    one = jobs.reference().records[0]
    ref = one["validation"]
    want = {k: v for ev in ref.values() for k, v in ev.items()}["validation/main/loss"]
    dev = as_pairs(next(iter(one["evaluated"].values())))
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        at = f"at {ranks_text(n, hosts)}"
        seen = {}
        for rank, rec in enumerate(job.records):
            if not rec["validation"]:
                fail(f"{EDITS[5]}: {at} rank {rank} has no Evaluator extension: every rank runs "
                     f"the (multi-node) evaluator")
            evaluated = as_pairs(next(iter(rec["evaluated"].values())))
            seen[rank] = evaluated
            if n > 1 and len(evaluated) >= len(dev):
                fail(f"{EDITS[5]}: {at} rank {rank} evaluated {len(evaluated)} dev sentences, "
                     f"all {len(dev)} of the dev set: the mean comes out right, but every rank "
                     f"repeats the whole evaluation. Scatter the dev set "
                     f"(chainermn.scatter_dataset(dev, comm)) so that each rank evaluates its "
                     f"share, and let the multi-node evaluator average the ranks' means")
        missing = len(set(dev) - {pair for pairs in seen.values() for pair in pairs})
        total = sum(len(pairs) for pairs in seen.values())
        if missing or total >= len(dev) + n:
            fail(f"{EDITS[5]}: {at} the ranks evaluated {[len(p) for p in seen.values()]} dev "
                 f"sentences, {missing} of the {len(dev)} on no rank: scatter the whole dev set, "
                 f"each sentence to one rank")
        for rank, rec in enumerate(job.records):
            losses = [v for ev in rec["validation"].values() for k, v in ev.items()
                      if k.endswith("/main/loss")]
            if not losses or not np.isclose(losses[0], want, rtol=1e-9, atol=0):
                got = f"{losses[0]:.6f}" if losses else "no main/loss"
                fail(f"{EDITS[5]}: {at} rank {rank} reports a validation loss of {got}, but one "
                     f"process scores the whole dev set (on the same weights) at {want:.6f}: wrap "
                     f"the Evaluator with chainermn.create_multi_node_evaluator(evaluator, comm), "
                     f"and scatter the dev set (its {N_DEV} sentences split equally, so the mean "
                     f"of the ranks' means is exact)")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_only_rank_0_reports(submission, observe):
    """Rank 0 writes the log and the snapshot; the other ranks, on every node, report and write
    nothing."""
    observe_jobs(submission, only_rank_0_reports, observe)


def check_only_rank_0_reports(obs, run):
    return check_jobs(obs, only_rank_0_reports)


def only_rank_0_reports(jobs):
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        at = f"at {ranks_text(n, hosts)}"
        written0 = set(job.written(0))
        if "log" not in written0 or not any(w.startswith("snapshot") for w in written0):
            fail(f"{EDITS[6]}: {at} rank 0 wrote {sorted(written0) or 'nothing'}; it should "
                 f"still write the log (LogReport) and the snapshot")
        for rank in range(1, n):
            reports = sorted(name for name, kind in job.records[rank]["extensions"].items()
                             if kind in REPORTS)
            written = job.written(rank)
            if written or reports:
                what = ", ".join(written + [f"the {r} extension" for r in reports])
                intra = intra_rank(job.records[rank])
                why = (" (its intra_rank is 0: it is the first rank of its node, and "
                       "`comm.intra_rank == 0` is true once per node)"
                       if hosts and intra == 0 else "")
                fail(f"{EDITS[6]}: {at} rank {rank} has {what}{why}: only rank 0 logs, prints "
                     f"and snapshots (`if comm.rank == 0:`)")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_ends_cleanly(submission, observe):
    """The converted job ends with every rank at the end of the script and mpiexec's status 0."""
    observe_jobs(submission, ends_cleanly, observe)


def check_ends_cleanly(obs, run):
    return check_jobs(obs, ends_cleanly)


def ends_cleanly(jobs):
    for n, hosts in LAYOUTS:
        job = finished(jobs, n, hosts)
        alone = [rank for rank, rec in enumerate(job.records) if intra_rank(rec) is None]
        if alone:  # a script that was never converted ends cleanly too: no point for that
            fail(f"{EDITS[1]}: at {ranks_text(n, hosts)} rank {alone[0]} ran to the end without "
                 f"a ChainerMN communicator: every rank trained alone. A clean end counts for a "
                 f"converted script: chainermn.create_communicator first")
    for n, hosts in GPU_LAYOUTS:
        job = jobs.learner(n, gpu=True, hosts=hosts)
        if job.records and all(rec and not rec["error"] for rec in job.records) and job.rc != 0:
            fail(f"with --gpu (simulated on CPU) at {ranks_text(n, hosts)} {SCRIPT} exited with "
                 f"status {job.rc}")
