"""The grader's script in each rank of a graded launch: pytest, a record per test. Run by its path:

    mpiexec -n N python B/rankwrap.py P B/pytest_in_rank.py run TESTS_ROOT NODEID [NODEID ...]
    python pytest_in_rank.py collect TESTS_ROOT LAB OUT.json   # a lab's tests and their markers

Run mode runs the given tests of one exercise, in order, at N ranks, in one pytest session: one
launch, one import of Chainer and of the learner's answers, however many tests (the grader's
``batch.py`` starts the rest again in a fresh launch when a test ends the session early).

It is never imported as ``dlhack.grade.pytest_in_rank``: importing the package would
import Chainer in every rank (0.3 s each). The grader copies it, with guard.py and rankwrap.py,
into a folder ``B`` of each run that the sandbox shows read-only; ``P`` is the run's folder.

What every supervised rank needs comes from ``dlhack/jobs/rankwrap.py``, the same wrapper as
``dlhack run``'s: the rank's output file, its pid file, SIGUSR1 stack dumps and fatal-signal
dumps, ``MPI_Abort`` on an uncaught error. This script keeps what is the grader's own. Run mode,
in order: take the run's folder (``DLHACK_GRADE_DIR``) and id (``DLHACK_RUN_ID``) out of the
environment; import MPI, numpy and pytest; wait at a barrier; run the tests with pytest, which
snapshots what a verdict rests on (``guard.py``, loaded from beside this file) once it has
collected them and before the first test imports the learner's answers. As each test ends, the
snapshot is checked and ``result.RANK.I.json`` written (I: the test's place in the command
line), naming this rank, the size, the test and the run id, which the grader checks; at the
end, ``result.RANK.end.json`` gives pytest's exit status. There is no key: nothing secret is
kept in a process that runs learner code (see the threat model in ``batch.py``). A test that
learner code stopped (``KeyboardInterrupt``, ``pytest.exit``) failed; one whose checks were
replaced was tampered with, and so is a rank whose records all say passed while pytest's exit
status says otherwise.
"""
import importlib.util
import json
import os
import sys
import time
import traceback
from pathlib import Path

# What learner code did to stop the test early, as the learner's failure (never the grader's).
STOPPED = {"Exit": "pytest.exit() was called", "KeyboardInterrupt": "the code was interrupted"}


def _message(exc):
    """What a failed test says, without pytest's assertion rewriting noise."""
    text = getattr(exc, "msg", None) if type(exc).__name__ == "Failed" else None
    if text is None:
        text = str(exc)
    if isinstance(exc, AssertionError):
        # Rewritten asserts append "\nassert <expr>\n + where ..."; the test's message is first.
        text = text.split("\nassert ")[0]
        if text.startswith("assert "):
            text = "an assertion failed: " + text.splitlines()[0]
    return text.strip()[:4000]


def _type_name(cls):
    """``ValueError`` for built-in exceptions, ``mpi4py.MPI.Exception`` for the others."""
    if issubclass(cls, MemoryError):
        return "MemoryError"  # numpy raises a private subclass
    if cls.__module__ == "builtins":
        return cls.__qualname__
    return f"{cls.__module__}.{cls.__qualname__}"


class Recorder:
    """A pytest plugin that keeps the first failure of each test and hands on its record as the
    test ends (``write(nodeid, record)``)."""

    def __init__(self, guard=None, root=None, write=None):
        self.guard, self.root, self.write = guard, root, write
        self.interrupted = None
        self.collect_error = None
        self.current = None  # the test running now (its node id)
        self._reset()

    def _reset(self):
        self.seen = False
        self.failure = None
        self.skipped = None
        self.call_passed = False
        self.stdout = ""

    def pytest_collectreport(self, report):
        if report.failed and self.collect_error is None:
            self.collect_error = str(report.longrepr)[-3000:]

    def pytest_collection_finish(self, session):
        if self.guard is not None:  # the test modules are loaded now; the answers are not yet
            self.guard.take()  # again: what collection imported (Chainer, numpy.testing) too
            self.guard.take_tests(self.root)

    def pytest_runtest_logstart(self, nodeid, location):
        self.current = nodeid
        self._reset()

    def pytest_runtest_logfinish(self, nodeid, location):
        if self.write is not None:
            self.write(nodeid, self.record())
        self.current = None

    def pytest_keyboard_interrupt(self, excinfo):
        # pytest stops the whole session for these, and finishes no report of the test.
        kind = type(excinfo.value).__name__
        text = str(getattr(excinfo.value, "msg", "") or excinfo.value)
        frames = traceback.extract_tb(excinfo.tb)[-40:]
        self.interrupted = {
            "phase": "call", "exc_type": kind,
            "message": STOPPED.get(kind, "the test was stopped")
                       + (f" ({text[:200]})" if text else "") + ": that ends the test run, so "
                       "the test counts as failed",
            "frames": [[f.filename, f.lineno, f.name, (f.line or "")[:200]] for f in frames]}

    def pytest_runtest_makereport(self, item, call):
        # A plain hook (not a wrapper) sees the exception itself; pytest builds the report after.
        self.seen = True
        excinfo = call.excinfo
        if excinfo is None or self.failure is not None:
            return
        if type(excinfo.value).__name__ == "Skipped":
            self.skipped = self.skipped or str(excinfo.value)
            return
        frames = traceback.extract_tb(excinfo.tb)[-40:]
        self.failure = {
            "phase": call.when,
            "exc_type": _type_name(type(excinfo.value)),
            "message": _message(excinfo.value),
            "frames": [[f.filename, f.lineno, f.name, (f.line or "")[:200]] for f in frames],
        }

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.call_passed = report.passed
            self.stdout = report.capstdout[-2000:]

    def record(self):
        """The outcome of the current test on this rank: passed, failed, skipped or error."""
        if self.interrupted is not None:
            return {"outcome": "failed", "stdout": self.stdout, **self.interrupted}
        if self.collect_error is not None:
            return {"outcome": "error", "message": self.collect_error}
        if not self.seen:
            return {"outcome": "error", "message": "the test was not found"}
        if self.failure is not None:
            return {"outcome": "failed", "stdout": self.stdout, **self.failure}
        if self.skipped is not None:
            return {"outcome": "skipped", "message": self.skipped}
        return {"outcome": "passed" if self.call_passed else "error", "message": ""}


class Lister:
    """A pytest plugin that lists the collected tests with their rank counts and points."""

    def __init__(self):
        self.items, self.errors = [], []

    def pytest_collectreport(self, report):
        if report.failed:
            self.errors.append(str(report.longrepr)[-3000:])

    def pytest_collection_finish(self, session):
        for item in session.items:
            mpi = item.get_closest_marker("mpi")
            points = item.get_closest_marker("points")
            ranks = (mpi.kwargs.get("ranks", [1]) if mpi else [1])
            self.items.append({
                "nodeid": item.nodeid,
                "file": item.path.name,
                "name": item.name,
                "ranks": [ranks] if isinstance(ranks, int) else list(ranks),
                "timeout": mpi.kwargs.get("timeout") if mpi else None,
                "points": points.args[0] if points and points.args else 1,
                "doc": (item.obj.__doc__ or "").strip().split("\n")[0],
            })


def _pytest_args(root):
    # One ini file in the copied tree, so pytest never climbs into a project's pyproject.toml.
    return ["-c", str(Path(root) / "pytest.ini"), "--rootdir", str(root), "-p", "no:cacheprovider",
            "-p", "no:faulthandler", "-q", "--no-header"]


def collect(root, lab, out):
    import pytest

    lister = Lister()
    pytest.main([str(Path(root) / lab), "--collect-only", *_pytest_args(root)], plugins=[lister])
    Path(out).write_text(json.dumps({"items": lister.items, "errors": lister.errors}))
    return 0


def load_guard():
    """``guard.py`` from beside this file, by its path (this script imports no dlhack)."""
    path = Path(__file__).resolve().with_name("guard.py")
    spec = importlib.util.spec_from_file_location("_dlhack_guard", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def judge(record, changed):
    """The record, overruled when what the checks rest on was replaced."""
    if changed:
        more = f" and {len(changed) - 4} more" if len(changed) > 4 else ""
        return {**record, "outcome": "tampered",
                "message": f"your code replaced {', '.join(changed[:4])}{more} while the test ran"}
    return record


def _write(folder, name, record):
    tmp = folder / f".{name}.tmp"
    tmp.write_text(json.dumps(record))
    os.replace(tmp, folder / name)  # the grader never reads a torn record


def run(root, nodeids):
    here = Path(__file__).resolve().parent
    private = Path(os.environ.pop("DLHACK_GRADE_DIR"))
    run_id = os.environ.pop("DLHACK_RUN_ID", "")
    if sys.path and Path(sys.path[0]).resolve() in (here, private.resolve()):
        del sys.path[0]  # nothing of the grader's is for learner code to import
    import numpy  # noqa: F401 - loaded now, so that its functions are in the snapshot
    import pytest
    from mpi4py import MPI  # starts MPI; no learner code has run yet

    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    index = {nodeid: i for i, nodeid in enumerate(nodeids)}
    written = set()
    clock = [time.monotonic()]

    def write(nodeid, outcome):
        if nodeid not in index or nodeid in written:
            return  # not one of the tests asked for
        now = time.monotonic()
        record = {"rank": rank, "size": size, "nodeid": nodeid, "run_id": run_id,
                  "duration_s": round(now - clock[0], 3), **outcome}
        clock[0] = now
        _write(private, f"result.{rank}.{index[nodeid]}.json", judge(record, guard.changed()))
        written.add(nodeid)

    guard = load_guard().Guard()
    recorder = Recorder(guard, root, write)
    guard.take_object("Recorder", Recorder)  # the rest once pytest has collected the tests
    guard.take_object("pytest_in_rank.judge", judge)
    guard.take_object("pytest_in_rank._write", _write)
    comm.Barrier()
    clock[0] = time.monotonic()
    exit_code = pytest.main([str(Path(root) / nodeid) for nodeid in nodeids]
                            + _pytest_args(root), plugins=[recorder])
    if recorder.current is not None:  # interrupted: pytest never finished that test's report
        write(recorder.current, recorder.record())
    if recorder.collect_error is not None:
        for nodeid in nodeids:
            write(nodeid, recorder.record())
    _write(private, f"result.{rank}.end.json",
           {"rank": rank, "size": size, "run_id": run_id, "exit_code": int(exit_code)})
    sys.stdout.flush()
    return 0


def main(argv):
    if argv[:1] == ["collect"] and len(argv) == 4:
        return collect(*argv[1:])
    if argv[:1] == ["run"] and len(argv) >= 3:
        return run(argv[1], argv[2:])
    sys.stdout.write(__doc__)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
