"""Lab 3 (03_convert): the checks of the setup edits, (1) the communicator, (2) the device and
(6) the reports, as ``logic(jobs)`` that fails naming the edit (mntraining.py: the others).

jobviews.py hands each one the jobs (run in the rank, or as observed, in the grader's check).
The training run is checked at every layout of convert.LAYOUTS, the --gpu start at every one
of GPU_LAYOUTS; every choice a rank makes is checked (each device, each writer), not the first.
"""
from convert import (
    EDITS,
    GPU_LAYOUTS,
    LAYOUTS,
    REPORTS,
    SCRIPT,
    fail,
    ranks_text,
)


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
