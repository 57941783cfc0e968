"""Lab 3 (03_convert): run the learner's train_mn.py under mpiexec and read what each rank did.

The graded tests are declared at one rank (``ranks=[1]``) and start the jobs themselves:
``mpiexec -n N python observe.py ... -- train_mn.py ...`` at 1, 2 and 3 ranks on one node and at
4 ranks on two simulated nodes (``LAYOUTS``: where ``intra_rank`` is not ``rank``), outside the
grader's own mpiexec (``without_launcher``). The ``--gpu`` start runs at 2 nodes x 2 ranks, in
block and in round-robin placement (``GPU_LAYOUTS``). observe.py records each rank; the tests compare the
records with one-process references made by the same observer from train_single.py, the script
the learner was given. Jobs are deterministic, so the tests of one grading share them (a cache
in the grading's own temporary folder, under a lock); elsewhere each test runs its own.
"""
import fcntl
import hashlib
import json
import os
import pickle
import sys
import threading
from pathlib import Path

import numpy as np
import pytest
from conftest import MISSING_ANSWER
from labjobs import in_background, launch

HERE = Path(__file__).resolve().parent
OBSERVE, SINGLE = HERE / "observe.py", HERE / "train_single.py"
SCRIPT = "train_mn.py"
RANKS = (1, 2, 3)
# (ranks, simulated hosts): one node, then 2 nodes x 2 ranks, placed in blocks (node 0: ranks
# 0-1) or round-robin (node 0: ranks 0 and 2), so that intra_rank and rank differ.
LAYOUTS = tuple((n, None) for n in RANKS) + ((4, "block:2"),)
GPU_LAYOUTS = ((4, "block:2"), (4, "cyclic:2"))
N_TRAIN, N_DEV = 47, 60  # 47: shards padded at 2 and 3 ranks; 60: equal dev shards up to 6
BATCH, ITERATIONS = 4, 4  # at 2 and 3 ranks every shard is whole batches of 4
ARGS = ["--n-train", N_TRAIN, "--n-dev", N_DEV, "--units", 16, "--batchsize", BATCH,
        "--iterations", ITERATIONS]
REPORTS = ("LogReport", "PrintReport", "ProgressBar", "PlotReport", "_Snapshot", "Snapshot")
JOB_TIMEOUT = 120
EDITS = {1: "edit (1), the communicator", 2: "edit (2), the device from comm.intra_rank",
         3: "edit (3), the multi-node optimizer", 4: "edit (4), scatter_dataset",
         5: "edit (5), the multi-node evaluator", 6: "edit (6), reports on rank 0 only"}


class Verdict(Exception):
    """A check's failure: its message names the edit to look at."""


def fail(message):
    raise Verdict(message)


def script_text(submission):
    """The learner's train_mn.py, from its ``%%writefile`` answer cell."""
    files = getattr(getattr(submission, "_module", submission), "WRITTEN_FILES", {})
    if SCRIPT not in files:
        pytest.fail(f"{MISSING_ANSWER} `%%writefile {SCRIPT}` answer cell: keep the cell's "
                    f"first line as it is, and run it", pytrace=False)
    return files[SCRIPT]


def raise_stub(line):
    """Report a script that still raises NotImplementedError the way the grader knows a stub:
    raised at that script line's place in submission.py (see grade/notebook.py)."""
    path = os.environ["DLHACK_SUBMISSION"]
    lines = Path(path).read_text().splitlines()
    start = lines.index(f"WRITTEN_FILES[{SCRIPT!r}] = \"\".join([")
    at = start + 1 + (line or 1)
    code = "\n" * (at - 2) + "def train_mn():\n    raise NotImplementedError()\n"
    namespace = {}
    exec(compile(code, path, "exec"), namespace)  # noqa: S102 - our own two lines
    namespace["train_mn"]()


class Job:
    """One finished job: its exit status, output, and each rank's record and arrays."""

    def __init__(self, folder, n):
        self.folder, self.n, self.hosts = Path(folder), n, None
        status = json.loads((self.folder / "status.json").read_text())
        self.rc, self.output, self.timed_out = status["rc"], status["output"], status["timed_out"]
        self.records, self.arrays = [], []
        for rank in range(n):
            path = self.folder / f"rank.{rank}.json"
            self.records.append(json.loads(path.read_text()) if path.exists() else None)
            npz = self.folder / f"rank.{rank}.npz"
            self.arrays.append(dict(np.load(npz)) if npz.exists() else {})

    def params(self, rank, stage):
        """``{name: array}`` of a rank's parameters at ``init``, ``first``, ``final`` or ``grad``."""
        prefix = stage + "/"
        return {k[len(prefix):]: v for k, v in self.arrays[rank].items() if k.startswith(prefix)}

    def batches(self, rank):
        return pickle.loads((self.folder / f"rank.{rank}.batches.pkl").read_bytes())

    def out(self, rank):
        return self.folder / f"out{rank}"

    def written(self, rank):
        """The names of the files ``rank`` wrote under its ``--out``, sorted."""
        return sorted(p.name for p in self.out(rank).rglob("*") if p.is_file())

    def tail(self, lines=12):
        return "\n".join(self.output.strip().splitlines()[-lines:])

    def problem(self):
        """None when every rank finished and mpiexec exited 0; else what went wrong."""
        where = f"at {ranks_text(self.n, self.hosts)}"
        if self.timed_out:
            return (f"{where} the job did not finish within {JOB_TIMEOUT} s (a rank waiting "
                    f"for the others: is every collective, such as the evaluator, on every rank?)"
                    f"; its last output:\n{self.tail()}")
        errors = [(r, rec["error"]) for r, rec in enumerate(self.records) if rec and rec["error"]]
        if errors:
            rank, err = errors[0]
            line = f" at line {err['line']} of {SCRIPT}" if err["line"] else ""
            return (f"{where} rank {rank} raised {err['type']}{line}: {err['message']}; "
                    f"the job's last output:\n{self.tail()}")
        unfinished = [r for r, rec in enumerate(self.records) if not rec or not rec["finished"]]
        if unfinished:
            return (f"{where} rank{'s' if len(unfinished) > 1 else ''} "
                    f"{', '.join(map(str, unfinished))} never reached the end of {SCRIPT}; the "
                    f"job's last output:\n{self.tail()}")
        if self.rc != 0:
            return (f"{where} every rank reached the end of {SCRIPT}, but the job exited with "
                    f"status {self.rc} (a crash at exit, as ChainerMN's own seq2seq example has)"
                    f"; its last output:\n{self.tail()}")
        return None


def job_root():
    """Where jobs go: the grading's own temporary folder (``dlhack-grade-*``), shared by its
    tests, or else this test's working directory."""
    sub = os.environ.get("DLHACK_SUBMISSION")
    if sub and len(Path(sub).parents) > 2 and Path(sub).parents[2].name.startswith("dlhack-grade-"):
        root = Path(sub).parents[2] / "03_convert-jobs"
    else:
        root = Path.cwd() / "03_convert-jobs"
    root.mkdir(parents=True, exist_ok=True)
    return root


def save_once(path, write):
    """``write(tmp)`` then rename to ``path``, unless ``path`` exists (tests, and the threads
    of ``prefetch``, share the folder: each writer has its own temporary name)."""
    path = Path(path)
    if not path.exists():
        tmp = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        write(tmp)
        os.replace(tmp, path)
    return path


def savez(path, arrays):
    with open(path, "wb") as f:
        np.savez(f, **arrays)


def run_job(n, script, flags=(), args=ARGS, key=""):
    """Run observe.py on ``script`` at ``n`` ranks (or reuse the same job of this grading)."""
    digest = hashlib.sha256(json.dumps([n, Path(script).name, list(flags), list(map(str, args)),
                                        key]).encode()).hexdigest()[:20]
    root = job_root()
    folder = root / digest
    argv = [str(OBSERVE), str(folder), *flags, "--", str(script), *map(str, args),
            "--out", f"{folder}/out{{rank}}"]
    with open(root / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "status.json").exists():
            folder.mkdir(exist_ok=True)
            launch(n, [sys.executable, *argv], folder, JOB_TIMEOUT)
    return Job(folder, n)


def learner_job(submission, n, gpu=False, hosts=None):
    """The learner's script at ``n`` ranks (on the simulated nodes ``hosts``, see LAYOUTS): the
    training run (or, with ``gpu``, its start with --gpu on simulated GPUs). A script that still
    raises NotImplementedError is reported as not done; a crash, as a failure naming the rank
    and line."""
    text = script_text(submission)
    folder = job_root() / ("script-" + hashlib.sha256(text.encode()).hexdigest()[:20])
    folder.mkdir(exist_ok=True)
    save_once(folder / SCRIPT, lambda tmp: tmp.write_text(text))
    where = ["--hosts", hosts] if hosts else []
    if gpu:
        job = run_job(n, folder / SCRIPT, ["--sim-gpu", "--no-train", *where], ARGS + ["--gpu"],
                      key=text)
    else:
        ref = reference()
        flags = ["--eval-params", str(ref.folder / "eval-params.npz"), "--perturb", *where]
        job = run_job(n, folder / SCRIPT, flags, key=text)
    job.hosts = hosts
    errors = [rec["error"] for rec in job.records if rec and rec["error"]]
    if errors and all(e["type"] == "NotImplementedError" for e in errors):
        raise_stub(errors[0]["line"])
    return job


def reference():
    """One process running train_single.py up to training: the full training set, the
    seeded initial weights (saved as eval-params.npz) and the validation loss on them."""
    job = run_job(1, SINGLE, ["--no-train"])
    if job.problem():
        raise RuntimeError(f"the reference run of train_single.py failed: {job.problem()}")
    save_once(job.folder / "eval-params.npz",
              lambda tmp: savez(tmp, job.params(0, "init")))
    return job


def replay(job):
    """One process, train_single.py with batch N x b: from rank 0's initial weights, on the
    union of the ranks' batches 2..K (ChainerMN's first update only broadcasts), K - 1 steps."""
    folder = job.folder
    per_rank = [job.batches(r) for r in range(job.n)]
    steps = [[pair for b in per_rank for pair in b[t]] for t in range(1, ITERATIONS)]
    union = save_once(folder / "union.pkl", lambda tmp: tmp.write_bytes(pickle.dumps(steps)))
    save_once(folder / "rank0-init.npz",
              lambda tmp: savez(tmp, job.params(0, "init")))
    args = list(ARGS)
    args[args.index("--batchsize") + 1] = BATCH * job.n
    args[args.index("--iterations") + 1] = ITERATIONS - 1
    ref = run_job(1, SINGLE, ["--init", str(folder / "rank0-init.npz"), "--replay", str(union)],
                  args, key=str(folder))
    if ref.problem():
        raise RuntimeError(f"the one-process reference run failed: {ref.problem()}")
    return ref


def prefetch(submission):
    """Start, in the background, every job the tests ask for (labjobs.in_background)."""
    def run_and_replay(n, hosts):
        job = learner_job(submission, n, hosts=hosts)
        if not job.problem():
            replay(job)

    in_background([reference, *(lambda n=n, h=h: run_and_replay(n, h) for n, h in LAYOUTS),
                   *(lambda n=n, h=h: learner_job(submission, n, gpu=True, hosts=h)
                     for n, h in GPU_LAYOUTS)])


def first_difference(a, b, rtol=1e-7, atol=1e-10):
    """None when two ``{name: array}`` agree; else ``(name, largest difference)``."""
    for name in sorted(set(a) | set(b)):
        if name not in a or name not in b or a[name].shape != b[name].shape:
            return name, float("inf")
        if not np.allclose(a[name], b[name], rtol=rtol, atol=atol):
            return name, float(np.abs(a[name] - b[name]).max())
    return None


def ranks_text(n, hosts=None):
    """``3 ranks``, or ``4 ranks on 2 nodes in blocks (node 0: ranks 0, 1)``."""
    text = f"{n} rank{'s' if n > 1 else ''}"
    if not hosts:
        return text
    from observe import host_of

    kind, nodes = hosts.split(":")
    first = [r for r in range(n) if host_of(hosts, r, n) == "node0"]
    placed = "in blocks" if kind == "block" else "round-robin"
    return f"{text} on {nodes} nodes {placed} (node 0: ranks {', '.join(map(str, first))})"
