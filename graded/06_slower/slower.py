"""Lab 6 (06_slower): run the learner's train_fast.py under mpiexec and count each rank's work.

The graded tests are declared at one rank and start the jobs themselves, at 1, 2 and 3 ranks,
outside the grader's mpiexec (``without_launcher``) and *without* OMP_NUM_THREADS or
OPENBLAS_NUM_THREADS in the environment, as a learner's shell often has it: the script has to
keep BLAS to its share of the cores itself. watch.py records each rank. Only noise-free
quantities are graded (sentences, batch sizes, threads, who evaluates, devices); never time.
Jobs are deterministic, so the tests of one grading share them (a cache in the grading's own
temporary folder, under a lock).
"""
import fcntl
import hashlib
import json
import os
import sys
from pathlib import Path

import pytest
from conftest import MISSING_ANSWER
from labjobs import in_background, launch

HERE = Path(__file__).resolve().parent
WATCH = HERE / "watch.py"
SCRIPT = "train_fast.py"
RANKS = (1, 2, 3)
N_TRAIN, N_DEV, N_TEST, BATCH = 60, 30, 25, 4  # 25: a padded BLEU shard would show
ARGS = ["--n-train", N_TRAIN, "--n-dev", N_DEV, "--n-test", N_TEST, "--units", 16,
        "--batchsize", BATCH, "--iterations", 3]
JOB_TIMEOUT = 120
CORES = 16  # the simulated cores of a node (watch.py --cores): the grading machine may have 2
GPU_HOSTS = {2: "block:1", 3: "round-robin:2"}  # --gpu jobs on 2 simulated nodes (watch.py --hosts)


def fail(message):
    pytest.fail(message, pytrace=False)


def ranks_text(n):
    return f"{n} rank{'s' if n > 1 else ''}"


def script_text(submission):
    files = getattr(getattr(submission, "_module", submission), "WRITTEN_FILES", {})
    if SCRIPT not in files:
        fail(f"{MISSING_ANSWER} `%%writefile {SCRIPT}` answer cell: keep the cell's first line "
             f"as it is, and run it")
    return files[SCRIPT]


def raise_stub(line):
    """Report a script that still raises NotImplementedError the way the grader knows a stub:
    raised at that script line's place in submission.py (see grade/notebook.py)."""
    path = os.environ["DLHACK_SUBMISSION"]
    lines = Path(path).read_text().splitlines()
    at = lines.index(f"WRITTEN_FILES[{SCRIPT!r}] = \"\".join([") + 1 + (line or 1)
    namespace = {}
    code = "\n" * (at - 2) + "def train_fast():\n    raise NotImplementedError()\n"
    exec(compile(code, path, "exec"), namespace)  # noqa: S102 - our own two lines
    namespace["train_fast"]()


def job_root():
    sub = os.environ.get("DLHACK_SUBMISSION")
    if sub and len(Path(sub).parents) > 2 and Path(sub).parents[2].name.startswith("dlhack-grade-"):
        root = Path(sub).parents[2] / "06_slower-jobs"
    else:
        root = Path.cwd() / "06_slower-jobs"
    root.mkdir(parents=True, exist_ok=True)
    return root


class Job:
    """A finished job: exit status, output, and each rank's record (None if it wrote none)."""

    def __init__(self, folder, n):
        self.folder, self.n = Path(folder), n
        status = json.loads((self.folder / "status.json").read_text())
        self.rc, self.output, self.timed_out = status["rc"], status["output"], status["timed_out"]
        self.records = [json.loads(p.read_text()) if p.exists() else None
                        for p in (self.folder / f"rank.{r}.json" for r in range(n))]

    def tail(self, lines=12):
        return "\n".join(self.output.strip().splitlines()[-lines:])

    def problem(self):
        """None when every rank finished and mpiexec exited 0; else what went wrong."""
        where = f"at {ranks_text(self.n)}"
        if self.timed_out:
            return f"{where} the job did not finish within {JOB_TIMEOUT} s:\n{self.tail()}"
        errors = [(r, rec["error"]) for r, rec in enumerate(self.records) if rec and rec["error"]]
        if errors:
            rank, err = errors[0]
            line = f" at line {err['line']} of {SCRIPT}" if err["line"] else ""
            return f"{where} rank {rank} raised {err['type']}{line}: {err['message']}\n{self.tail()}"
        if not all(rec and rec["finished"] for rec in self.records) or self.rc != 0:
            return f"{where} the job did not end cleanly (status {self.rc}):\n{self.tail()}"
        if not all("shard" in rec for rec in self.records):
            return f"{where} the script never started a chainer Trainer (trainer.run())"
        return None


def run_job(n, text, gpu=False):
    """The learner's script at ``n`` ranks (with ``gpu``: --gpu on simulated GPUs)."""
    flags = ["--cores", str(CORES)] + (["--sim-gpu", "--hosts", GPU_HOSTS[n]] if gpu else [])
    args = ARGS + (["--gpu"] if gpu else [])
    digest = hashlib.sha256(json.dumps([n, flags, list(map(str, args)), text]).encode())
    root, key = job_root(), digest.hexdigest()[:20]
    folder = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (folder / "status.json").exists():
            folder.mkdir(exist_ok=True)
            (folder / SCRIPT).write_text(text)
            argv = [sys.executable, str(WATCH), str(folder), *flags, "--", str(folder / SCRIPT),
                    *map(str, args), "--out", f"{folder}/out{{rank}}"]
            launch(n, argv, folder, JOB_TIMEOUT, keep_threads=False)
    return Job(folder, n)


def observe_jobs(submission, observe, gpu=False):
    """Hand the grader every job of this kind (1, 2, 3 ranks; with ``gpu``: 2 and 3 on simulated
    nodes): each one's problem (None when it ended cleanly), rank records and output."""
    jobs = {}
    for n in (RANKS[1:] if gpu else RANKS):
        job = run_job(n, script_text(submission), gpu)
        errors = [rec["error"] for rec in job.records if rec and rec["error"]]
        if errors and all(e["type"] == "NotImplementedError" for e in errors):
            raise_stub(errors[0]["line"])
        problem = job.problem()
        jobs[str(n)] = {"problem": problem and ("with --gpu (GPUs simulated on CPU): " if gpu
                                                 else "") + problem,
                        "records": job.records, "output": job.output[-20000:]}
    observe(jobs=jobs)


def learner_job(submission, n, gpu=False):
    """The job, which must have ended cleanly; a script still raising NotImplementedError is
    reported as not done."""
    job = run_job(n, script_text(submission), gpu)
    errors = [rec["error"] for rec in job.records if rec and rec["error"]]
    if errors and all(e["type"] == "NotImplementedError" for e in errors):
        raise_stub(errors[0]["line"])
    if job.problem():
        fail(("with --gpu (GPUs simulated on CPU): " if gpu else "") + job.problem())
    return job


def reference():
    """What the grader knows without the learner's script: the sentence ids of the training
    set, the test sentences' ids, and the corpus BLEU of every test sentence's pseudo-translation
    (watch.py), each scored once."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        from dlhack.bleu import corpus_bleu
        from dlhack.corpus import default_corpus
    from watch import pseudo_translation, sentence_id

    corpus = default_corpus(seed=0, n_train=N_TRAIN, n_dev=N_DEV, n_test=N_TEST)
    hyps = [corpus.tgt_vocab.decode(pseudo_translation(tgt)) for _, tgt in corpus.test]
    refs = [tgt for _, tgt in corpus.raw["test"]]
    return {"train": [sentence_id(src, tgt) for src, tgt in corpus.train],
            "test": [sentence_id(src) for src, _ in corpus.test],
            "bleu": corpus_bleu(hyps, refs)}


def threads_asked(rec):
    """The BLAS threads a rank runs on a node of CORES cores: what the environment asked for
    when numpy loaded (OpenBLAS's first variable set), else a thread per core; or fewer, when
    the script limited them at run time (threadpoolctl shows it below both)."""
    env = rec.get("blas_env") or {}
    asked = next((env[k] for k in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
                  if env.get(k)), None)
    try:
        asked = int(asked) if asked is not None else CORES
    except ValueError:
        asked = CORES
    real = os.cpu_count() or 1
    measured = rec.get("blas_threads", asked)
    return measured if measured < min(asked, real) else asked


def prefetch(submission):
    """Start, in the background, every job the tests ask for (labjobs.in_background)."""
    in_background([*(lambda n=n: learner_job(submission, n) for n in RANKS),
                   *(lambda n=n: learner_job(submission, n, gpu=True) for n in RANKS[1:])])
