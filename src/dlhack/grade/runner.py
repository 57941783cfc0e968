"""Run one graded test at one rank count under mpiexec, sealed off, and read back what happened.

    run = run_case(test, ranks, job)     # harness.py calls this once per (test, rank count)

Each run gets a fresh folder with an unguessable name under ``job.base`` (itself fresh and
private to one submission):

    case-*/bin/       the grader's scripts for the ranks: rank.py, guard.py, rankwrap.py and the
                      two files it loads (read-only in the sandbox)
    case-*/tests/     a fresh copy of the lab's tests (read-only in the sandbox)
    case-*/work/      the working directory, with ``submission.py``, the learner's answers
    case-*/run-*/     the run files of tools/runfiles.py (rank.N.out/pid/stack/crash/done,
                      mpiexec.out) and each rank's result record ``result.N.json``

``mpiexec -n N python bin/rankwrap.py run-* bin/rank.py run tests NODEID`` is started by
``dlhack.tools.supervise``, the same supervisor as ``dlhack run``'s, inside the sandbox of
``sandbox.py`` (bubblewrap: PID, user, mount, network and IPC namespaces; read-only project; no
``solutions/``; private /tmp and /dev/shm), under limits on address space, CPU time and file
size. The grader polls for the ranks' result records and ends the run when every rank has
reported; when a rank failed and the others are still running FAIL_GRACE seconds later; when a
rank passed and the others still run PASS_GRACE seconds later; or at the test's timeout. Ranks
that never reported are asked for their Python stacks (SIGUSR1), then everything the run started
is killed: bwrap, whose PID namespace takes every process in it down, and the supervisor's
/proc sweep on top. ``verdict.py`` turns what is left into an outcome.

Threat model. Submissions are untrusted; learners may attack the grader and each other.

- Each other: a run sees no other run's folders, processes or network, and nothing of it
  outlives the run. A result record is read only from the run's own folder, which nothing but
  that run's processes can write, and must name the rank, the rank count, the test and the run
  id the grader chose; a record that does not is that submission's doing (tampered) and stops
  only that submission. A class graded together gets the grades each would get alone.
- The grader and later gradings: the project, the environment and the tests are read-only;
  ``solutions/``, the repository's tests and other submissions are not there; the copied tests
  and scripts are compared afterwards all the same.
- Its own verdict: no secret is kept in a process that runs learner code. rank.py snapshots
  what the verdict rests on (numpy's comparisons, builtins, pytest, the lab's test helpers, its
  own recorder) and a run where any was replaced is tampered; the recorder's outcome must agree
  with pytest's exit status.

What remains possible, honestly: learner code runs in the same process as the test that checks
it, so code determined enough (ctypes, rewriting the snapshot, writing its own record and
exiting) can still make that rank report a pass; the comparison is not yet done outside that
process. It can use the CPU time, memory and tmpfs space the limits give it (the run's folder on disk
is bounded per file, 64 MB, not in total), and read what the sandbox shows (the project
without solutions). When the grader runs as root the sandbox's
nobody is root on the host files it can see (read-only). With ``trusted=True`` (``--trusted``:
a learner grading their own notebook; the lab's check cells) there is no sandbox at all: learner
code runs as the grader's user, and only the checks above stand.
"""
import hashlib
import json
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dlhack.grade import sandbox
from dlhack.grade.plan import RANK_SCRIPT, LabError, child_env, repo_root, write_files
from dlhack.grade.verdict import summarize
from dlhack.tools import supervise
from dlhack.tools.mpiexec import find_mpiexec as _find_mpiexec
from dlhack.tools.runfiles import output_tail

POLL_S = 0.02      # s: how often the result records are looked for
FAIL_GRACE = 2.0   # s: after one rank fails, how long the others get before they count as stuck
PASS_GRACE = 5.0   # s: after one rank passes; generous: a false "stuck" fails a correct answer
EXIT_GRACE = 1.0   # s: after every rank reported, how long mpiexec gets to exit by itself
DUMP_WAIT_S = 1.0  # s: how long ranks that never reported get to dump their stacks


@dataclass
class Job:
    """What every run of one submission shares."""

    files: tuple            # the lab's test files, from plan.lab_files
    submission: object      # notebook.Submission
    base: Path              # where the case directories go
    memory_mb: int = 1024   # address-space limit of each rank
    file_mb: int = 64       # largest file a rank (or mpiexec's log) may write
    trusted: bool = False   # run without the sandbox (a learner's own notebook)
    origin: Path = None     # the submission's folder, hidden from the sandbox


def find_mpiexec():
    """mpiexec beside this Python (the mpich wheel puts it there), or on PATH."""
    found = _find_mpiexec(default=None)
    if not found:
        raise LabError("mpiexec not found: install MPI (`pip install mpich`) in this environment")
    return found


def run_case(test, ranks, job):
    """Run ``test`` at ``ranks`` ranks; returns a dict with outcome, message and details."""
    case = Path(tempfile.mkdtemp(prefix="case-", dir=job.base))
    bin_dir, tests, work = case / "bin", case / "tests", case / "work"
    run_dir = case / f"run-{secrets.token_hex(8)}"
    for path in (bin_dir, tests, work, run_dir):
        path.mkdir()
    digests = write_files(job.files, tests)
    submission = case / "submission.py"
    submission.write_text(job.submission.text)
    shutil.copyfile(submission, work / "submission.py")  # what trusted runs import
    for script in (RANK_SCRIPT, RANK_SCRIPT.with_name("guard.py")):
        shutil.copyfile(script, bin_dir / script.name)
    scripts = [bin_dir / "rank.py", bin_dir / "guard.py", *supervise.install_wrapper(bin_dir)]
    script_digests = {path.name: _sha256(path) for path in scripts}
    run_id = secrets.token_hex(16)
    mpiexec = find_mpiexec()
    prefix = () if job.trusted else sandbox.command(sandbox.Paths(
        root=repo_root(), bin=bin_dir, tests=tests, work=work, submission=submission,
        run_dir=run_dir, mpiexec=mpiexec, origin=job.origin))
    limits = (job.memory_mb << 20, int(test.timeout) + 5, job.file_mb << 20)
    env = child_env(DLHACK_GRADE_DIR=str(run_dir), DLHACK_RUN_ID=run_id,
                    DLHACK_SUBMISSION=str(work / "submission.py"),
                    **({} if job.trusted else {"HOME": "/tmp", "TMPDIR": "/tmp"}))
    start = time.monotonic()
    running = supervise.start(
        [sys.executable, str(bin_dir / "rank.py"), "run", str(tests), test.nodeid], run_dir,
        ranks, wrapper=bin_dir / "rankwrap.py", mpiexec=mpiexec, cwd=work, env=env,
        threads=1, limits=limits, folders=(work, tests, bin_dir), prefix=prefix)
    expect = {"size": ranks, "nodeid": test.nodeid, "run_id": run_id}
    try:
        records, bad, reason = _watch(running.proc, run_dir, expect, start + test.timeout)
        missing = [r for r in range(ranks) if r not in records]
        if running.proc.poll() is None and missing:
            running.stacks(missing, wait_s=DUMP_WAIT_S)
    finally:
        running.kill()
    duration = time.monotonic() - start
    _read_records(run_dir, expect, records, bad)  # a rank may have finished meanwhile
    changed = _changed(tests, digests)
    changed += [name for name, digest in script_digests.items()
                if _sha256(bin_dir / name) != digest]
    run = summarize(test, ranks, job, records, bad, changed, reason, run_dir, work)
    run["duration_s"] = round(duration, 2)
    if run["outcome"] != "passed":
        run["log"] = output_tail(run_dir, 3000)
    shutil.rmtree(case, ignore_errors=True)
    return run


def _watch(proc, run_dir, expect, deadline):
    """Poll until the run is over; returns (records, unverifiable ranks, why it was stopped)."""
    records, bad = {}, set()
    first_report = all_reported = None
    ranks = expect["size"]
    while True:
        exited = proc.poll() is not None
        _read_records(run_dir, expect, records, bad)
        now = time.monotonic()
        if exited:
            return records, bad, "exited"
        if bad:
            return records, bad, "forged"
        if len(records) == ranks:
            all_reported = all_reported or now
            if now - all_reported > EXIT_GRACE:
                return records, bad, "reported"
        elif records:
            first_report = first_report or now
            failed = any(r["outcome"] != "passed" for r in records.values())
            if now - first_report > (FAIL_GRACE if failed else PASS_GRACE):
                return records, bad, "stuck"
        if now > deadline:
            return records, bad, "timeout"
        time.sleep(POLL_S)


OUTCOMES = ("passed", "failed", "skipped", "error", "tampered")


def _read_records(run_dir, expect, records, bad):
    """Add every new record that names this rank, size, test and run; note those that do not."""
    for rank in range(expect["size"]):
        path = run_dir / f"result.{rank}.json"
        if rank in records or not path.exists():
            continue
        try:
            record = json.loads(path.read_text())
            good = (isinstance(record, dict) and record.get("rank") == rank
                    and all(record.get(k) == v for k, v in expect.items())
                    and record.get("outcome") in OUTCOMES
                    and isinstance(record.get("message", ""), str))
        except (OSError, ValueError, TypeError):
            good = False  # rank.py writes with os.replace, so a torn file is someone else's
        if good:
            records[rank] = record
        else:
            bad.add(rank)


def _changed(tests, digests):
    """Test files that differ from what the grader wrote, or were added."""
    found = {p.relative_to(tests).as_posix(): _sha256(p) for p in tests.rglob("*")
             if p.is_file() and "__pycache__" not in p.parts}
    return sorted(rel for rel in set(digests) | set(found) if digests.get(rel) != found.get(rel))


def _sha256(path):
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None


