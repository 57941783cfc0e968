"""One batch: an exercise's graded tests at one rank count, in one sealed launch under mpiexec.

Then what each test's run left behind is read back as its verdict.

    runs = run_batch(tests, ranks, job)     # schedule.py calls this once per exercise and count

One launch runs every test given, in order, in one pytest session per rank: MPI, Chainer and the
learner's answers are started and imported once, not once per test (the grading time a learner
waits for is mostly that start-up). Each launch gets a fresh folder with an unguessable name
under ``job.base`` (itself fresh and private to one submission):

    case-*/bin/       the grader's scripts for the ranks: pytest_in_rank.py, guard.py,
                      rankwrap.py and the two files it loads (read-only in the sandbox)
    case-*/tests/     a fresh copy of the lab's tests (read-only in the sandbox)
    case-*/work/      the working directory, with ``submission.py``, the learner's answers
    case-*/run-*/     the run files of jobs/runfiles.py (rank.N.out/pid/stack/crash/done,
                      mpiexec.out) and each rank's result records ``result.N.I.json`` (test I)

``mpiexec -n N python bin/rankwrap.py run-* bin/pytest_in_rank.py run tests NODEID...`` is
started by ``dlhack.jobs.supervise``, the same supervisor as ``dlhack run``'s, inside the
sandbox of ``sandbox.py`` (bubblewrap: PID, user, mount, network and IPC namespaces; read-only
project; no ``solutions/``; private /tmp and /dev/shm), under limits on address space, CPU time
and file size. The grader polls for the ranks' result records (``Watch``) and gives each test
its own timeout, counted from the end of the test before it. It ends the launch when every rank
has reported every test; when a rank failed a test and the others are still in it FAIL_GRACE
seconds later; when a rank passed it and the others still run PASS_GRACE seconds later; or at
the test's timeout. Ranks that never reported are asked for their Python stacks (SIGUSR1), then
everything the launch started is killed: bwrap, whose PID namespace takes every process in it
down, and the supervisor's /proc sweep on top. ``verdict.py`` turns what is left into an
outcome for each test. A test that ended the launch early costs only itself: the tests behind
it run again in a fresh launch, unless that test stops them (stopearly.py: it hung, say).

Threat model. Submissions are untrusted; learners may attack the grader and each other.

- Each other: a run sees no other run's folders, processes or network, and nothing of it
  outlives the run. A result record is read only from the run's own folder, which nothing but
  that run's processes can write, and must name the rank, the rank count, the test and the run
  id the grader chose; a record that does not is that submission's doing (tampered) and stops
  only that submission. A class graded together gets the grades each would get alone.
- The grader and later gradings: the project, the environment and the tests are read-only;
  ``solutions/``, ``graded/``, the repository's tests and other submissions are not there; the
  copied tests and scripts are compared afterwards all the same.
- Its own verdict: no secret is kept in a process that runs learner code. pytest_in_rank.py
  snapshots what the verdict rests on (numpy's comparisons, builtins, pytest, the lab's test
  helpers, its own recorder) and a run where any was replaced is tampered; the recorder's
  outcome must agree with pytest's exit status.

What remains possible, honestly: learner code runs in the same process as the test that checks
it, so code determined enough (ctypes, rewriting the snapshot, writing its own record and
exiting) can still make that rank report a pass; the comparison is not yet done outside that
process. It can use the CPU time, memory and tmpfs space the limits give it (the run's folder on
disk is bounded per file, 64 MB, not in total), and read what the sandbox shows (the project
without solutions). When the grader runs as root the sandbox's nobody is root on the host files
it can see (read-only). With ``trusted=True`` (``--trusted``: a learner grading their own
notebook; the lab's check cells) there is no sandbox at all: learner code runs as the grader's
user, and only the checks above stand.
"""
import hashlib
import secrets
import shutil
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dlhack.grade import sandbox
from dlhack.grade.checker import CheckRequest, decide
from dlhack.grade.plan import RANK_SCRIPT, child_env, repo_root, write_files
from dlhack.grade.stopearly import stops_after
from dlhack.grade.verdict import Evidence, summarize
from dlhack.grade.watch import Watch
from dlhack.jobs import supervise
from dlhack.jobs.runfiles import output_tail

DUMP_WAIT_S = 1.0  # s: how long ranks that never reported get to dump their stacks
UNCHECKED = ("this test has no check half (check_NAME in its file), so nothing outside your "
             "code can decide it; the grader refuses a rank's own verdict, and it scores 0")
RANK_SIBLINGS = ("guard", "recorder", "obsformat", "traffic")  # loaded by pytest_in_rank.py


@dataclass
class Job:
    """What every batch of one submission shares."""

    files: tuple            # the lab's test files, from plan.lab_files
    submission: object      # notebook.Submission
    base: Path              # where the case directories go
    mpiexec: str            # the launcher (jobs.mpiexec.find_mpiexec)
    memory_mb: int = 1024   # address-space limit of each rank
    file_mb: int = 64       # largest file a rank (or mpiexec's log) may write
    trusted: bool = False   # run without the sandbox (a learner's own notebook)
    origin: Path = None     # the submission's folder, hidden from the sandbox
    checker: object = None  # checker.Checker: decides the tests that have a check half
    shim: tuple = (None, "the grader built no MPI shim")  # pmpi.shim(): (path, why not)


@dataclass
class Case:
    """One launch's folders (see the module docstring) and what the grader wrote into them."""

    bin: Path
    tests: Path
    work: Path
    run_dir: Path
    submission: Path
    digests: dict        # test file -> sha256, as written
    scripts: dict        # script name -> sha256, as copied

    def changed(self):
        """The grader's files that differ from what it wrote, or were added."""
        found = {p.relative_to(self.tests).as_posix(): _sha256(p) for p in self.tests.rglob("*")
                 if p.is_file() and "__pycache__" not in p.parts}
        changed = sorted(rel for rel in set(self.digests) | set(found)
                         if self.digests.get(rel) != found.get(rel))
        return changed + [name for name, digest in self.scripts.items()
                          if _sha256(self.bin / name) != digest]


def run_batch(tests, ranks, job, on_result=None, stopped=None):
    """Run ``tests`` (one exercise's, in order) at ``ranks`` ranks; returns ``{nodeid: run}``.

    One launch runs them all, one pytest session per rank. A test that ends the launch early
    (it hung, a rank crashed or exited, the record could not be verified) gets its verdict from
    what the launch left behind. The tests behind it then run again in a fresh launch, unless
    its verdict stops them (``stopearly.stops_after``: after a hang each would most likely hang
    too and cost its timeout).

    Args:
        on_result: called as ``on_result(test, run)`` as each test's verdict is known (from
            the watching thread), e.g. to print a line per run; the runs returned are final.
        stopped: a function that returns why the rest should not run (or None), asked before
            every launch.
    """
    runs, pending = {}, list(tests)
    while pending:
        reason = stopped() if stopped else None
        if reason:
            break
        done = _launch(pending, ranks, job, on_result)
        runs.update(done)
        last = done[pending[len(done) - 1].nodeid]
        pending = pending[len(done):]
        stop = stops_after(last, ranks) if pending else None
        if stop is not None:
            reason = stop.message
            break
    for test in pending:
        runs[test.nodeid] = {"ranks": ranks, "outcome": "not_run", "message": reason}
    return runs


def _case(tests, job):
    """A fresh case folder with the lab's tests, the scripts and the submission written."""
    root = Path(tempfile.mkdtemp(prefix="case-", dir=job.base))
    case = Case(bin=root / "bin", tests=root / "tests", work=root / "work",
                run_dir=root / f"run-{secrets.token_hex(8)}",
                submission=root / "submission.py", digests={}, scripts={})
    for path in (case.bin, case.tests, case.work, case.run_dir):
        path.mkdir()
    case.digests = write_files(job.files, case.tests)
    case.submission.write_text(job.submission.text)
    shutil.copyfile(case.submission, case.work / "submission.py")  # what trusted runs import
    copied = [RANK_SCRIPT, *(RANK_SCRIPT.with_name(f"{name}.py") for name in RANK_SIBLINGS)]
    if job.shim[0] is not None:
        copied.append(Path(job.shim[0]))
    for script in copied:
        shutil.copyfile(script, case.bin / script.name)
    scripts = [case.bin / path.name for path in copied] + list(supervise.install_wrapper(case.bin))
    case.scripts = {path.name: _sha256(path) for path in scripts}
    return case


def _start(tests, ranks, job, case, run_id, seed):
    """Start the launch: mpiexec in the sandbox (unless trusted), under limits."""
    prefix = () if job.trusted else sandbox.command(sandbox.Paths(
        root=repo_root(), bin=case.bin, tests=case.tests, work=case.work,
        submission=case.submission, run_dir=case.run_dir, mpiexec=job.mpiexec,
        origin=job.origin))
    limits = (job.memory_mb << 20, int(sum(t.timeout for t in tests)) + 5, job.file_mb << 20)
    shim = str(case.bin / Path(job.shim[0]).name) if job.shim[0] is not None else ""
    env = child_env(DLHACK_GRADE_DIR=str(case.run_dir), DLHACK_RUN_ID=run_id,
                    DLHACK_SEED=str(seed), DLHACK_PMPI=shim, DLHACK_TRAFFIC=str(case.run_dir),
                    DLHACK_SUBMISSION=str(case.work / "submission.py"),
                    **({} if job.trusted else {"HOME": "/tmp", "TMPDIR": "/tmp"}))
    return supervise.start(
        [sys.executable, str(case.bin / RANK_SCRIPT.name), "run", str(case.tests),
         *(t.nodeid for t in tests)], case.run_dir, ranks, wrapper=case.bin / "rankwrap.py",
        mpiexec=job.mpiexec, cwd=case.work, env=env, threads=1, limits=limits,
        folders=(case.work, case.tests, case.bin), prefix=prefix)


def _launch(tests, ranks, job, on_result):
    """One launch of ``tests``; returns the runs of those that got a verdict, in order: every
    test up to the first that did not finish on every rank, that one included."""
    case = _case(tests, job)
    run_id, seed = secrets.token_hex(16), secrets.randbits(32)
    watch = Watch(tests, ranks, case.run_dir, run_id)
    watch.seed, watch.decided = seed, {}

    def announce(i):  # a test every rank finished: its verdict now, for the progress line
        if on_result is not None:
            on_result(tests[i], _verdict(tests[i], job, watch, i, [], "reported", case.work))

    running = _start(tests, ranks, job, case, run_id, seed)
    try:
        reason = watch.until_over(running.proc, announce)
        current = watch.current()
        if running.proc.poll() is None and current is not None:
            running.stacks(watch.missing(current), wait_s=DUMP_WAIT_S)
    finally:
        running.kill()
    watch.read()  # a rank may have finished meanwhile
    changed = case.changed()
    runs = {}
    for i, test in enumerate(tests):
        finished = watch.finished(i)
        run = _verdict(test, job, watch, i, changed, "reported" if finished else reason,
                       case.work, own_files=not finished)
        if on_result is not None and (not finished or changed):
            on_result(test, run)  # its verdict, unless announced already and still true
        runs[test.nodeid] = run
        if not finished:
            break
    shutil.rmtree(case.run_dir.parent, ignore_errors=True)
    return runs


def _verdict(test, job, watch, i, changed, reason, work, own_files=True):
    records = _decided(test, job, watch, i)
    forged = sorted({rank for rank, j in watch.bad if j in (i, "end")})
    run = summarize(test, job, Evidence(watch.ranks, records, forged, changed, reason,
                                        watch.run_dir, work, own_files))
    run["duration_s"] = watch.duration(i)
    if own_files and run["outcome"] != "passed":  # the launch's output ended with this test
        run["log"] = output_tail(watch.run_dir, 3000)
    return run


def _decided(test, job, watch, i):
    """Each rank's record of test ``i``; for a test with a check half, its "passed" replaced
    by the checker's verdict (checker.decide), asked once per test and launch."""
    records = {rank: record for (rank, j), record in watch.records.items() if j == i}
    if not test.checked:  # a rank's own "passed" decides nothing (the threat model, README)
        return {rank: {**record, "outcome": "error", "message": UNCHECKED}
                if record["outcome"] == "passed" else record for rank, record in records.items()}
    key = (i, tuple(sorted((r, rec.get("outcome")) for r, rec in records.items())))
    if key not in watch.decided:
        case = CheckRequest(test, watch.run_dir, i, watch.ranks, watch.seed, job.shim[1])
        watch.decided[key] = decide(job.checker, case, records)
    return watch.decided[key]


def _sha256(path):
    try:
        return hashlib.sha256(Path(path).read_bytes()).hexdigest()
    except OSError:
        return None
