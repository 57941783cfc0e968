"""Run one graded test at one rank count under mpiexec, safely, and read back what happened.

    run = run_case(test, ranks, job)     # harness.py calls this once per (test, rank count)

Each run gets fresh directories under ``job.base``:

    case-*/tests/    a fresh copy of the lab's tests (compared afterwards: changed -> tampered)
    case-*/work/     the working directory; ``submission.py``, the learner's answers, is here
    case-*/p-*/      private: copies of rank.py and of rankwrap.py with the two files it loads
                     (compared afterwards too), one-time keys, results, and the run files of
                     tools/runfiles.py (rank.N.out/pid/stack/crash/done, mpiexec.out)

``mpiexec -n N python p-*/rankwrap.py p-* p-*/rank.py run tests NODEID`` is started by
``dlhack.tools.supervise``, the same supervisor as ``dlhack run``'s: in a new session, under
limits on address space, CPU time and file size, every rank inside the same ``rankwrap.py``. The
grader polls for the ranks' result records and ends the run when every rank has reported; when a
rank failed and the others are still running FAIL_GRACE seconds later (they are waiting for it);
when a rank passed and the others still run PASS_GRACE seconds later; or at the test's timeout.
Ranks that never reported are asked for their Python stacks (SIGUSR1), then everything the run
started is killed (the supervisor's /proc sweep), and ``verdict.py`` turns what is left into an
outcome. The log shown with a failure is the end of every rank's output and of mpiexec's.

Threat model, honestly: this is not a sandbox. Learner code runs as the same user as the grader.
What it cannot easily do is change its score: the tests are copied fresh for every run and
compared afterwards; the outcome is read only from result records signed with a key that each
rank reads and deletes before any learner code runs; a record with a bad signature marks the
submission as tampered; a missing record is a failure, never a pass. "Private" means unguessable,
not hidden: learner code can learn the private folder's path (it is on the rank's command line
and in ``DLHACK_RUN_DIR``, the supervisor's mark for its kill sweep). What this does not defend
against: reading the key from the rank's own memory (gc, ptrace), monkeypatching the test or
pytest inside the rank, damaging files the user can write, the repository included, or writing
run files (stack, crash and output files) that shape the message but never the score; and a
process that clears its environment, leaves the run's folders and double-forks away from its
rank outlives the kill sweep. Grading code from strangers needs a container or a separate user
on top of this.
"""
import hashlib
import hmac
import json
import secrets
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dlhack.grade.plan import RANK_SCRIPT, LabError, child_env, write_files
from dlhack.grade.rank import sign
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


def find_mpiexec():
    """mpiexec beside this Python (the mpich wheel puts it there), or on PATH."""
    found = _find_mpiexec(default=None)
    if not found:
        raise LabError("mpiexec not found: install MPI (`pip install mpich`) in this environment")
    return found


def run_case(test, ranks, job):
    """Run ``test`` at ``ranks`` ranks; returns a dict with outcome, message and details."""
    case = Path(tempfile.mkdtemp(prefix="case-", dir=job.base))
    tests, work, private = case / "tests", case / "work", case / f"p-{secrets.token_hex(8)}"
    for path in (tests, work, private):
        path.mkdir()
    digests = write_files(job.files, tests)
    (work / "submission.py").write_text(job.submission.text)
    shutil.copyfile(RANK_SCRIPT, private / "rank.py")
    scripts = [private / "rank.py", *supervise.install_wrapper(private)]
    script_digests = {path.name: _sha256(path) for path in scripts}
    key = secrets.token_bytes(32)
    for rank in range(ranks):
        (private / f"key.{rank}").write_bytes(key)
    limits = (job.memory_mb << 20, int(test.timeout) + 5, job.file_mb << 20)
    env = child_env(DLHACK_GRADE_DIR=str(private), DLHACK_SUBMISSION=str(work / "submission.py"))
    start = time.monotonic()
    running = supervise.start(
        [sys.executable, str(private / "rank.py"), "run", str(tests), test.nodeid], private,
        ranks, wrapper=private / "rankwrap.py", mpiexec=find_mpiexec(), cwd=work, env=env,
        threads=1, limits=limits, folders=(work, tests))
    try:
        records, forged, reason = _watch(running.proc, private, ranks, key, start + test.timeout)
        missing = [r for r in range(ranks) if r not in records]
        if running.proc.poll() is None and missing:
            running.stacks(missing, wait_s=DUMP_WAIT_S)
    finally:
        running.kill()
    duration = time.monotonic() - start
    _read_records(private, ranks, key, records, forged)  # a rank may have finished meanwhile
    changed = _changed(tests, digests)
    changed += [name for name, digest in script_digests.items()
                if _sha256(private / name) != digest]
    run = summarize(test, ranks, job, records, forged, changed, reason, private, work)
    run["duration_s"] = round(duration, 2)
    if run["outcome"] != "passed":
        run["log"] = output_tail(private, 3000)
    shutil.rmtree(case, ignore_errors=True)
    return run


def _watch(proc, private, ranks, key, deadline):
    """Poll until the run is over; returns (records, forged ranks, why it was stopped)."""
    records, forged = {}, set()
    first_report = all_reported = None
    while True:
        exited = proc.poll() is not None
        _read_records(private, ranks, key, records, forged)
        now = time.monotonic()
        if exited:
            return records, forged, "exited"
        if forged:
            return records, forged, "forged"
        if len(records) == ranks:
            all_reported = all_reported or now
            if now - all_reported > EXIT_GRACE:
                return records, forged, "reported"
        elif records:
            first_report = first_report or now
            failed = any(r["outcome"] != "passed" for r in records.values())
            if now - first_report > (FAIL_GRACE if failed else PASS_GRACE):
                return records, forged, "stuck"
        if now > deadline:
            return records, forged, "timeout"
        time.sleep(POLL_S)


def _read_records(private, ranks, key, records, forged):
    """Add every new, correctly signed result record; note the ranks whose record is not."""
    for rank in range(ranks):
        path = private / f"result.{rank}.json"
        if rank in records or not path.exists():
            continue
        try:
            record = json.loads(path.read_text())
            good = (isinstance(record, dict) and record.get("rank") == rank
                    and hmac.compare_digest(str(record.get("mac", "")), sign(key, record)))
        except (OSError, ValueError, TypeError):
            good = False  # rank.py writes with os.replace, so a torn file is someone else's
        if good:
            records[rank] = record
        else:
            forged.add(rank)


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


