"""Grade one submission: a batch per exercise and rank count, side by side on shared rank slots.

    result = grade_notebook("labs/02_collectives.ipynb")       # from a file
    result = grade(plan, submission, exercises=["allreduce_ring"])

Each exercise's tests at one rank count run as one batch (``batch.run_batch``: one mpiexec, one
import of Chainer and of the answers, however many tests), and the batches of different rank
counts and exercises run side by side. They share rank ``Slots``: at most ``capacity`` ranks at
once in this process, across all submissions graded together. The smallest rank counts go
first, and a batch is not started when an earlier run already tells how it would end
(``stopearly.py``). The points are added up by ``score.py``; the result is a plain dict (see
``report.py`` for its JSON, JUnit and text forms).
"""
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from dlhack.grade import intake, notebook, pmpi, sandbox
from dlhack.grade.batch import Job, run_batch
from dlhack.grade.checker import Checker
from dlhack.grade.plan import LabError, lab_names, load_plan
from dlhack.grade.score import score
from dlhack.grade.stopearly import stops_after
from dlhack.jobs import allocation
from dlhack.jobs.mpiexec import find_mpiexec

MIN_SLOTS = 4  # a lab's biggest test runs 4 ranks however few cores there are: up to 4 at once
# then adds no oversubscription that the biggest test does not bring anyway


class Slots:
    """At most ``capacity`` ranks running at once, shared by every run that holds this object.

    By default the cores this job was given (``jobs.allocation.cores``: the affinity, Slurm's
    or PBS's CPUs on this node), never the machine's, and at least MIN_SLOTS.
    """

    def __init__(self, capacity=None):
        self.capacity = capacity or max(allocation.cores(), MIN_SLOTS)
        self._free = self.capacity
        self._cond = threading.Condition()

    @contextmanager
    def hold(self, ranks):
        ranks = min(ranks, self.capacity)  # a run bigger than the machine runs alone
        with self._cond:
            self._cond.wait_for(lambda: self._free >= ranks)
            self._free -= ranks
        try:
            yield
        finally:
            with self._cond:
                self._free += ranks
                self._cond.notify_all()


class Schedule:
    """The batches of one submission, and what has stopped the ones not started yet."""

    def __init__(self, tests, job, slots, progress=None):
        self.tests, self.job, self.slots, self.progress = tests, job, slots, progress
        self.stops = {}  # exercise (or None: everything) -> why its runs are not started
        self.lock = threading.Lock()

    def stopped(self, exercise):
        with self.lock:
            return self.stops.get(None) or self.stops.get(exercise)

    def note(self, test, ranks, run):
        """As each run ends: the progress line, and what it stops."""
        if self.progress is not None:
            self.progress(test, ranks, run)
        stop = stops_after(run, ranks)
        if stop is not None:
            with self.lock:
                if stop.whole:
                    self.stops[None] = stop.message
                else:
                    self.stops.setdefault(test.exercise, stop.message)

    def batch(self, exercise, ranks):
        """Every test of ``exercise`` that runs at ``ranks`` ranks, in one launch."""
        group = [t for t in self.tests if t.exercise == exercise and ranks in t.ranks]
        reason = self.stopped(exercise)
        if not reason:
            with self.slots.hold(ranks):
                reason = self.stopped(exercise)  # again: an earlier run may have ended meanwhile
                if not reason:
                    return run_batch(group, ranks, self.job,
                                     lambda t, run: self.note(t, ranks, run),
                                     stopped=lambda: self.stopped(exercise))
        runs = {t.nodeid: {"ranks": ranks, "outcome": "not_run", "message": reason}
                for t in group}
        for t in group:
            self.note(t, ranks, runs[t.nodeid])
        return runs

    def run(self):
        """Run every batch; returns ``{(nodeid, ranks): run}``."""
        order = {name: i for i, name in enumerate(dict.fromkeys(t.exercise for t in self.tests))}
        # The smallest counts first: a mistake shows at the fewest ranks it needs (the easiest
        # case to read), and stops the bigger batches.
        batches = sorted({(t.exercise, n) for t in self.tests for n in t.ranks},
                         key=lambda b: (b[1], order[b[0]]))
        with ThreadPoolExecutor(max_workers=self.slots.capacity) as pool:
            futures = [(n, pool.submit(self.batch, e, n)) for e, n in batches]
            return {(nodeid, n): run for n, f in futures for nodeid, run in f.result().items()}


def grade_notebook(path, lab=None, **options):
    """Grade the notebook at ``path``; returns the result dict, never raises for a bad notebook.

    Args:
        path: the submission, an .ipynb file.
        lab: the lab's name; by default from the file or folder name, else the notebook's
            ``dlhack.lab`` metadata (``intake.check`` warns when they disagree).
        **options: passed on to :func:`grade` (exercises, timeout, memory_mb, slots, workdir,
            trusted).
    """
    start = time.monotonic()
    labs = lab_names(options.get("root"))
    base = {"submission": str(path), "lab": lab or intake.name_lab(path, labs)}
    try:
        base["lab"], warnings = intake.check(path, labs, lab)
        submission, _ = notebook.from_notebook(path)
    except notebook.SubmissionError as err:
        return _invalid(base, str(err), start)
    lab = base["lab"]
    if lab is None:
        return _invalid(base, f"cannot tell which lab {Path(path).name} is for: keep the lab's "
                        f"file name (e.g. 02_collectives*.ipynb) or pass --lab", start)
    options.setdefault("origin", Path(path).resolve().parent)
    result = grade(load_plan(lab, options.pop("root", None)), submission, **options)
    result["submission"] = str(path)
    result["warnings"] = warnings + result["warnings"]
    return result


def _invalid(base, message, start):
    return {**base, "status": "invalid", "message": message, "score": 0.0, "max_score": None,
            "exercises": [], "warnings": [], "duration_s": round(time.monotonic() - start, 2)}


def grade(plan, submission, *, exercises=None, timeout=None, memory_mb=1024, slots=None,
          workdir=None, trusted=False, origin=None, progress=None):
    """Run the graded tests of ``plan`` on a ``notebook.Submission``; returns the result dict.

    Args:
        plan: a ``plan.Plan`` (``plan.load_plan(lab)``).
        submission: the learner's answers as a module (``notebook.from_notebook`` and friends).
        exercises: grade only these exercises (default: all).
        timeout: seconds per run, replacing each test's own timeout.
        memory_mb: address-space limit of each rank.
        slots: a shared ``Slots``; by default one for this call.
        workdir: where the temporary directories go (default: the system's).
        trusted: run without the sandbox (``sandbox.py``): only for a learner's own work. By
            default a machine without one raises LabError rather than grade untrusted code.
        origin: the folder the submission came from, hidden from the sandbox (its neighbours).
        progress: called as ``progress(test, ranks, run)`` as each run ends (from a worker
            thread), e.g. to print a line per run in a check cell.

    Raises:
        LabError: the sandbox cannot be made here and ``trusted`` is not set, or there is no
            mpiexec.
    """
    start = time.monotonic()
    if not trusted and sandbox.unavailable():
        raise LabError(f"refusing to grade untrusted work without a sandbox: "
                       f"{sandbox.unavailable()}. To grade your own notebook anyway, pass "
                       f"--trusted (trusted=True)")
    mpiexec = find_mpiexec(default=None)
    if not mpiexec:
        raise LabError("mpiexec not found: install MPI (`pip install mpich`) in this environment")
    tests = [t for t in plan.tests if not exercises or t.exercise in exercises]
    if timeout:
        tests = [replace(t, timeout=float(timeout)) for t in tests]
    base = Path(tempfile.mkdtemp(prefix="dlhack-grade-", dir=workdir))  # unguessable, 0700
    shim = pmpi.shim(base / "pmpi")
    job = Job(files=plan.files, submission=submission, base=base, mpiexec=mpiexec,
              memory_mb=memory_mb, trusted=trusted, origin=origin, shim=shim,
              checker=Checker(plan, base) if any(t.checked for t in tests) else None)
    try:
        runs = Schedule(tests, job, slots or Slots(), progress).run()
    finally:
        if job.checker is not None:
            job.checker.close()
        shutil.rmtree(base, ignore_errors=True)
    result = score(plan, tests, runs)
    warnings = list(submission.errors) + ([f"dlhack: {shim[1]}"] if shim[1] else [])
    unchecked = [t.name for t in tests if not t.checked]
    if unchecked:
        warnings.append(f"dlhack: {len(unchecked)} graded test(s) of {plan.lab} have no check "
                        f"half and score 0 whatever the answers ({', '.join(unchecked[:3])}...): "
                        f"the lab's tests are being converted (graded/README.md)")
    result.update(warnings=warnings, duration_s=round(time.monotonic() - start, 2),
                  limits={"timeout_s": timeout, "memory_mb": memory_mb}, sandboxed=not trusted)
    return result
