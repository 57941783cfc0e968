"""Run one graded test at one rank count under mpiexec, safely, and read back what happened.

    run = run_case(test, ranks, job)     # harness.py calls this once per (test, rank count)

Each run gets fresh directories under ``job.base``:

    case-*/tests/    a fresh copy of the lab's tests (compared afterwards: changed -> tampered)
    case-*/work/     the working directory; ``submission.py``, the learner's answers, is here
    case-*/p-*/      private: rank.py, one-time keys, pids, stack dumps, results, mpiexec's log

``mpiexec -n N python p-*/rank.py run tests NODEID`` starts in a new session, under limits on
address space, CPU time and file size. The grader polls for the ranks' result records and ends
the run when every rank has reported; when a rank failed and the others are still running
FAIL_GRACE seconds later (they are waiting for it); when a rank passed and the others still run
PASS_GRACE seconds later; or at the test's timeout. Ranks that never reported get SIGUSR1 first
(rank.py installed faulthandler for it, so they dump their Python stacks), then everything is
killed: each process under mpiexec or named in the pid files, by process group (hydra starts
every rank in a session of its own, so killing mpiexec's group alone would leave ranks
spinning), then a sweep for anything still running in the private or working directory.

Threat model, honestly: this is not a sandbox. Learner code runs as the same user as the grader.
What it cannot easily do is change its score: the tests are copied fresh for every run and
compared afterwards; the outcome is read only from result records signed with a key that each
rank reads and deletes before any learner code runs; a record with a bad signature marks the
submission as tampered; a missing record is a failure, never a pass. What this does not defend
against: reading the key from the rank's own memory (gc, ptrace), monkeypatching the test or
pytest inside the rank, or damaging files the user can write, the repository included. Grading
code from strangers needs a container or a separate user on top of this.
"""
import hashlib
import hmac
import json
import os
import re
import secrets
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from dlhack.grade.plan import RANK_SCRIPT, LabError, child_env, write_files
from dlhack.grade.rank import IMPORT_FAILURE, sign

FAIL_GRACE = 2.0   # s: after one rank fails, how long the others get before they count as stuck
PASS_GRACE = 5.0   # s: after one rank passes; generous, since a false "stuck" fails a correct answer
EXIT_GRACE = 1.0   # s: after every rank reported, how long mpiexec gets to exit by itself
POLL = 0.02
FRAME = re.compile(r'File "(.+)", line (\d+) in (\S+)')
# Sets RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, then becomes mpiexec; the limits pass to every rank.
LIMITS = """import os, resource, sys
for name, value, extra in zip(("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE"), sys.argv[1:4], (0, 2, 0)):
    res = getattr(resource, name)
    soft, hard = int(value), int(value) + extra
    cap = resource.getrlimit(res)[1]
    if cap != resource.RLIM_INFINITY:
        soft, hard = min(soft, cap), min(hard, cap)
    resource.setrlimit(res, (soft, hard))
os.execv(sys.argv[4], sys.argv[4:])
"""


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
    beside = Path(sys.executable).parent / "mpiexec"
    found = os.environ.get("DLHACK_MPIEXEC") or (str(beside) if beside.exists() else None)
    found = found or shutil.which("mpiexec")
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
    rank_digest = _sha256(private / "rank.py")
    key = secrets.token_bytes(32)
    for rank in range(ranks):
        (private / f"key.{rank}").write_bytes(key)
    limits = [str(job.memory_mb << 20), str(int(test.timeout) + 5), str(job.file_mb << 20)]
    cmd = [sys.executable, "-S", "-c", LIMITS, *limits, find_mpiexec(), "-n", str(ranks),
           sys.executable, str(private / "rank.py"), "run", str(tests), test.nodeid]
    env = child_env(DLHACK_GRADE_DIR=str(private), DLHACK_SUBMISSION=str(work / "submission.py"))
    start = time.monotonic()
    with open(private / "log.txt", "wb") as log:
        proc = subprocess.Popen(cmd, cwd=work, env=env, stdin=subprocess.DEVNULL, stdout=log,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            records, forged, reason = _watch(proc, private, ranks, key, start + test.timeout)
            missing = [r for r in range(ranks) if r not in records]
            if proc.poll() is None and missing:
                _dump_stacks(private, missing)
        finally:
            _kill_all(proc, private, work)
    duration = time.monotonic() - start
    _read_records(private, ranks, key, records, forged)  # a rank may have finished meanwhile
    changed = _changed(tests, digests) + (["rank.py"] if _sha256(private / "rank.py") != rank_digest else [])
    run = _summarize(test, ranks, job, records, forged, changed, reason, private, work)
    run["duration_s"] = round(duration, 2)
    if run["outcome"] != "passed":
        run["log"] = (private / "log.txt").read_text(errors="replace")[-3000:]
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
        time.sleep(POLL)


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


def _dump_stacks(private, ranks):
    """SIGUSR1 to the ranks that never reported; wait (up to 1 s) for their stack dumps."""
    signalled = []
    for rank in ranks:
        pid = _rank_pid(private, rank)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGUSR1)
                signalled.append(rank)
            except OSError:
                pass
    end = time.monotonic() + 1.0
    while time.monotonic() < end and not all(_text(private / f"stack.{r}") for r in signalled):
        time.sleep(POLL)


def _rank_pid(private, rank):
    """The pid a rank wrote, if that process is still a rank of this run (no recycled pids)."""
    try:
        pid = int((private / f"pid.{rank}").read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if str(private).encode() in cmdline else None


def _processes():
    """``{pid: (ppid, cmdline, cwd)}`` of every process we can see, read from /proc."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            cmdline = Path(entry.path, "cmdline").read_bytes()
            cwd = os.readlink(Path(entry.path, "cwd"))
        except OSError:
            continue
        table[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline, cwd)
    return table


def _kill_all(proc, private, work):
    """Kill mpiexec, everything under it and anything still using our directories."""
    table = _processes()
    doomed, todo = {proc.pid}, [proc.pid]
    while todo:  # every descendant of mpiexec, found before anything dies and gets reparented
        parent = todo.pop()
        kids = [pid for pid, (ppid, _, _) in table.items() if ppid == parent and pid not in doomed]
        doomed.update(kids)
        todo += kids
    marks = (str(private).encode(), str(work).encode())
    doomed.update(pid for pid, (_, cmd, cwd) in table.items()
                  if any(m in cmd or m in cwd.encode() for m in marks))
    doomed.discard(os.getpid())
    own_group = os.getpgid(0)
    for pid in doomed:
        try:
            group = os.getpgid(pid)
            if group != own_group:
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


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


def _text(path):
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""


def _where(frames, job, work):
    """Where in the learner's cells a list of (file, line, function) frames, innermost first, points."""
    sub = str(work / "submission.py")
    for filename, line, func in frames:
        if filename == sub:
            place = job.submission.where(int(line))
            if place:
                return f"{func} (line {place['line']} of {place['cell']}): {place['code']}"
            return f"{func}, line {line} of the answers"
    for filename, line, func in frames:
        if Path(filename).name.startswith("test_"):
            return f"in the test ({Path(filename).name}, line {line}), not in your code"
    return ""


def _in_answers(where):
    return bool(where) and not where.startswith("in the test")


def _short_mpi_error(message):
    """MPICH's error stack, cut to its last line: "Invalid rank has value 3 but must be ..."."""
    head, _, stack = message.partition(", error stack:")
    lines = stack.strip().splitlines()
    return lines[-1].split("): ", 1)[-1] if lines else head


def _dump_frames(text):
    return [m.groups() for m in FRAME.finditer(text)]


def _ranks_text(ranks):
    ranks = sorted(ranks)
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


def _summarize(test, ranks, job, records, forged, changed, reason, private, work):
    """Turn what the ranks left behind into one outcome and a message for the learner."""
    details, stuck = [], {}
    for rank in range(ranks):
        record = records.get(rank)
        if record is not None:
            frames = [tuple(f[:3]) for f in reversed(record.get("frames", []))]
            details.append({"rank": rank, "state": record["outcome"], "message": record.get("message", ""),
                            "exc_type": record.get("exc_type", ""), "where": _where(frames, job, work),
                            "phase": record.get("phase", ""), "stdout": record.get("stdout", "")})
            continue
        crash, stack = _text(private / f"crash.{rank}"), _text(private / f"stack.{rank}")
        state = "crashed" if crash.strip() else "waiting" if stack.strip() else "gone"
        text = crash if crash.strip() else stack
        where = _where(_dump_frames(text), job, work)
        message = crash.strip().splitlines()[0] if crash.strip() else ""
        details.append({"rank": rank, "state": state, "message": message, "where": where})
        if state == "waiting":
            stuck.setdefault(where or "somewhere outside your code", []).append(rank)
    # Ranks blocked inside the learner's code: the other rank counts would block there too.
    run = {"ranks": ranks, "details": details, "stuck": any(_in_answers(w) for w in stuck)}
    bad = [d for d in details if d["state"] in ("failed", "error", "skipped")]
    crashed = [d for d in details if d["state"] == "crashed"]
    missing = [d["rank"] for d in details if d["state"] in ("crashed", "waiting", "gone")]
    waiting = "; ".join(f"{_ranks_text(r)} {'was' if len(r) == 1 else 'were'} still waiting in {w}"
                        for w, r in stuck.items())
    on = f"rank {bad[0]['rank']}: " if bad and ranks > 1 else ""

    if changed or forged:
        what = (f"changed the grader's test files ({', '.join(changed[:4])})" if changed else
                f"wrote a result file the grader did not sign ({_ranks_text(forged)})")
        return {**run, "outcome": "tampered",
                "message": f"your code {what}; this is not allowed, so the submission scores 0"}
    if not missing and not bad:
        return {**run, "outcome": "passed", "message": ""}
    if bad and all(d["exc_type"] == "NotImplementedError" and _in_answers(d["where"]) for d in bad):
        func = bad[0]["where"].split(" ")[0]
        return {**run, "outcome": "not_done", "message": f"not yet done: {func} still raises NotImplementedError"}
    if crashed:
        first = crashed[0]
        message = f"{_ranks_text([first['rank']])} crashed ({first['message'] or 'killed'})"
        message += f" in {first['where']}" if first["where"] else ""
        return {**run, "outcome": "crashed", "message": message + (f". {waiting}" if waiting else "")}
    if bad:
        first = bad[0]
        if first["state"] == "error":
            return {**run, "outcome": "error", "message": f"the test could not run: {first['message']}"}
        kind = first["exc_type"].rsplit(".", 1)[-1]
        raised = kind not in ("AssertionError", "Failed", "")
        message = first["message"]
        if first["exc_type"] == "mpi4py.MPI.Exception":
            message = f"raised an MPI error: {_short_mpi_error(message)}"
        elif raised:
            message = f"raised {kind}: {message}"
        if kind == "MemoryError":
            message += f" (each rank may use at most {job.memory_mb} MiB)"
        if _in_answers(first["where"]):
            message += f" in {first['where']}"
        if len(bad) > 1:
            message += f" ({_ranks_text([d['rank'] for d in bad])} failed)"
        if waiting:
            message += f". Meanwhile {waiting}" + (
                ", for the rank that failed" if raised else
                ": a rank that waits forever usually means another rank skipped the matching "
                "send or receive")
        setup = all(d["phase"] == "setup" and d["message"].startswith(IMPORT_FAILURE) for d in bad)
        return {**run, "outcome": "failed", "message": on + message, "import_failed": setup}
    if reason in ("timeout", "stuck"):
        done = [d["rank"] for d in details if d["state"] == "passed"]
        lead = (f"{_ranks_text(done)} finished, but the others did not" if done
                else f"no rank finished within {test.timeout:g} s")
        hint = " (an endless loop, or a receive that no rank sends to)" if not done else ""
        return {**run, "outcome": "hung", "timed_out": reason == "timeout",
                "message": f"{lead}{hint}" + (f": {waiting}" if waiting else "")}
    return {**run, "outcome": "crashed",
            "message": f"{_ranks_text(missing)} exited without finishing the test (did the code call "
                       f"sys.exit() or os._exit(), or run out of CPU time?)"}
