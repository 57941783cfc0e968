"""Grade one submission: run a lab's tests at each rank count in parallel and add up the points.

    result = grade_notebook("labs/02_collectives.ipynb")       # from a file
    result = grade(plan, submission, exercises=["allreduce_ring"])

A test earns its points only when it passes at every rank count it declares. Each exercise's
tests at one rank count run in one launch (``runner.run_tests``: one mpiexec, one import of
Chainer and of the answers, however many tests), and the launches of different rank counts and
exercises run side by side. Launches share rank
``Slots``: at most ``capacity`` ranks at once in this process, across all submissions graded
together. Some outcomes stop the runs that have not started yet, because their outcome is known
and waiting for them would only cost time:

- a stub (NotImplementedError), or no answer function at all: the rest of that exercise is not
  run;
- a run that timed out, or left ranks waiting inside the learner's code: the rest of that
  exercise is not run (each would hang too, and cost a timeout or a grace period);
- answer cells that cannot be imported, or tampering: nothing more of the submission is run.

The result is a plain dict (see ``report.py`` for its JSON, JUnit and text forms).
"""
import os
import shutil
import tempfile
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

from dlhack.grade import intake, notebook, sandbox
from dlhack.grade.plan import LabError, lab_names, load_plan
from dlhack.grade.runner import Job, run_tests

ODD_HINT = ("it fails only at odd rank counts: look for code that pairs ranks up or halves the "
            "work, assuming the count is even (or a power of two)")


class Slots:
    """At most ``capacity`` ranks running at once, shared by every run that holds this object."""

    def __init__(self, capacity=None):
        self.capacity = capacity or max(os.cpu_count() or 1, 4)
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
        return _verdict(base, "invalid", str(err), start)
    lab = base["lab"]
    if lab is None:
        return _verdict(base, "invalid", f"cannot tell which lab {Path(path).name} is for: keep "
                        f"the lab's file name (e.g. 02_collectives*.ipynb) or pass --lab", start)
    options.setdefault("origin", Path(path).resolve().parent)
    result = grade(load_plan(lab, options.pop("root", None)), submission, **options)
    result["submission"] = str(path)
    result["warnings"] = warnings + result["warnings"]
    return result


def _verdict(base, status, message, start):
    return {**base, "status": status, "message": message, "score": 0.0, "max_score": None,
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
        LabError: the sandbox cannot be made here and ``trusted`` is not set.
    """
    start = time.monotonic()
    if not trusted and sandbox.unavailable():
        raise LabError(f"refusing to grade untrusted work without a sandbox: "
                       f"{sandbox.unavailable()}. To grade your own notebook anyway, pass "
                       f"--trusted (trusted=True)")
    tests = [t for t in plan.tests if not exercises or t.exercise in exercises]
    if timeout:
        tests = [replace(t, timeout=float(timeout)) for t in tests]
    slots = slots or Slots()
    base = Path(tempfile.mkdtemp(prefix="dlhack-grade-", dir=workdir))  # unguessable, 0700
    job = Job(files=plan.files, submission=submission, base=base, memory_mb=memory_mb,
              trusted=trusted, origin=origin)
    stops, lock = {}, threading.Lock()  # exercise (or None: everything) -> why not run
    order = {name: i for i, name in enumerate(dict.fromkeys(t.exercise for t in tests))}

    def stopped(exercise):
        with lock:
            return stops.get(None) or stops.get(exercise)

    def note(test, ranks, run):  # as each run ends: the progress line, and what it stops
        if progress is not None:
            progress(test, ranks, run)
        with lock:
            if run["outcome"] == "tampered":
                stops[None] = "not run: the submission tampered with the grader's files"
            elif run.get("import_failed"):
                stops[None] = "not run: " + run["message"]
            elif run["outcome"] == "not_done" or run.get("missing_answer"):
                stops.setdefault(test.exercise, "not run: " + run["message"])
            elif run.get("timed_out") or run.get("stuck"):
                stops.setdefault(test.exercise, f"not run: this exercise already hung at {ranks} "
                                                f"rank{'s' if ranks > 1 else ''}")

    def batch(exercise, ranks):
        """Every test of ``exercise`` that runs at ``ranks`` ranks, in one launch."""
        group = [t for t in tests if t.exercise == exercise and ranks in t.ranks]
        reason = stopped(exercise)
        if not reason:
            with slots.hold(ranks):
                reason = stopped(exercise)  # again: an earlier run may have ended meanwhile
                if not reason:
                    return run_tests(group, ranks, job, lambda t, run: note(t, ranks, run),
                                     stopped=lambda: stopped(exercise))
        runs = {t.nodeid: {"ranks": ranks, "outcome": "not_run", "message": reason}
                for t in group}
        for t in group:
            note(t, ranks, runs[t.nodeid])
        return runs

    # One launch per exercise and rank count; the smallest counts first: a mistake shows at
    # the fewest ranks it needs (the easiest case to read), and stops the bigger launches.
    batches = sorted({(t.exercise, n) for t in tests for n in t.ranks},
                     key=lambda b: (b[1], order[b[0]]))
    try:
        with ThreadPoolExecutor(max_workers=slots.capacity) as pool:
            futures = [(n, pool.submit(batch, e, n)) for e, n in batches]
            runs = {(nodeid, n): run for n, f in futures for nodeid, run in f.result().items()}
    finally:
        shutil.rmtree(base, ignore_errors=True)
    return _score(plan, tests, runs, submission, start, timeout, memory_mb, trusted)


def _score(plan, tests, runs, submission, start, timeout, memory_mb, trusted):
    exercises = []
    for name in dict.fromkeys(t.exercise for t in tests):
        graded = [_test_result(t, [runs[(t.nodeid, n)] for n in t.ranks]) for t in tests
                  if t.exercise == name]
        score = sum(g["score"] for g in graded)
        top = sum(g["points"] for g in graded)
        todo = all(g["outcome"] in ("not_done", "not_run") for g in graded) and any(
            g["outcome"] == "not_done" for g in graded)
        status = ("passed" if score == top else "not_done" if todo else
                  "partial" if score > 0 else "failed")
        exercises.append({"name": name, "score": score, "max_score": top, "status": status,
                          "tests": graded})
    tampered = any(r["outcome"] == "tampered" for r in runs.values())
    stopped = [r["message"] for r in runs.values() if r.get("import_failed")]
    broken = [r["message"] for r in runs.values() if r["outcome"] == "error"]
    status = ("tampered" if tampered else "error" if stopped else
              "incomplete" if broken else "graded")
    message = ("the submission changed the grader's files or results; it scores 0" if tampered
               else stopped[0] if stopped else
               f"some tests could not run, which is not the learner's doing ({broken[0]}); "
               f"grade again once that is fixed" if broken else "")
    score = 0.0 if tampered else sum(e["score"] for e in exercises)
    return {"lab": plan.lab, "status": status, "message": message, "score": score,
            "max_score": sum(e["max_score"] for e in exercises), "exercises": exercises,
            "warnings": list(submission.errors), "duration_s": round(time.monotonic() - start, 2),
            "limits": {"timeout_s": timeout, "memory_mb": memory_mb}, "sandboxed": not trusted}


def _test_result(test, runs):
    """One test over its rank counts: passed only if every count passed."""
    passed = all(r["outcome"] == "passed" for r in runs)
    bad = [r for r in runs if r["outcome"] not in ("passed", "not_run")]
    skipped = [r for r in runs if r["outcome"] == "not_run"]
    if passed:
        outcome, message = "passed", ""
    elif not bad:
        outcome, message = "not_run", skipped[0]["message"]
    else:
        first = bad[0]
        outcome = first["outcome"]
        message = first["message"]
        if len(test.ranks) > 1 and outcome != "not_done":
            message = f"at {first['ranks']} rank{'s' if first['ranks'] > 1 else ''}: {message}"
            good = [r["ranks"] for r in runs if r["outcome"] == "passed"]
            failing = [r["ranks"] for r in bad]
            if good:
                unrun = [r["ranks"] for r in skipped]
                message = (f"passes at {_counts(good)}, fails at {_counts(failing)}"
                           + (f", not run at {_counts(unrun)}" if unrun else "") + ". " + message)
                if all(n % 2 for n in failing) and any(n % 2 == 0 for n in good):
                    message += f" ({ODD_HINT})"
    return {"name": test.name, "nodeid": test.nodeid, "doc": test.doc, "points": test.points,
            "score": test.points if passed else 0.0, "outcome": outcome, "message": message,
            "runs": runs}


def _counts(counts):
    return ", ".join(map(str, counts)) + (" rank" if counts == [1] else " ranks")
