"""The pytest plugin in each graded rank: what each test observed, and how it ended on this rank.

    recorder = Recorder(guard, root, begin, finish, seed)   # pytest_in_rank.py; pytest.main(...)
    observe(got=result, x=x)       # a test's observe half, through graded/conftest.py's fixture

As a test starts, ``begin(nodeid)`` (the driver marks it in the MPI shim's log); as it ends,
``finish(nodeid, record, observed)``: the values its ``observe`` calls gave, and the record, as
:meth:`Recorder.record` words it: ``passed`` (the test ran to its end without raising: for a test
decided outside the rank, only that it observed), ``failed`` with the first exception's type,
message and frames, ``skipped`` or ``error``. ``KeyboardInterrupt`` and ``pytest.exit()`` from
learner code end pytest's session; they are the learner's failure, never the grader's.

Nothing here is trusted by the grader to pass a test: learner code runs in this process and can
reach all of it (see the threat model in the README). Standard library only: the driver loads
this file by its path.
"""
import traceback

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


def _frames(tb):
    return [[f.filename, f.lineno, f.name, (f.line or "")[:200]]
            for f in traceback.extract_tb(tb)[-40:]]


class Recorder:
    """Keeps the first failure of each test and what it observed; hands both on as it ends."""

    def __init__(self, guard=None, root=None, begin=None, finish=None, seed=0):
        self.guard, self.root, self.begin, self.finish = guard, root, begin, finish
        self.seed = seed
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
        self.observed = {}

    def pytest_configure(self, config):
        # What graded/conftest.py's `observe` and `seed` fixtures hand the tests.
        config.dlhack_observe = self.observe
        config.dlhack_seed = self.seed

    def observe(self, values):
        """Add ``values`` to what the current test observed (a later name replaces one)."""
        self.observed.update(values)

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
        if self.begin is not None:
            self.begin(nodeid)

    def pytest_runtest_logfinish(self, nodeid, location):
        if self.finish is not None:
            self.finish(nodeid, self.record(), self.observed)
        self.current = None

    def pytest_keyboard_interrupt(self, excinfo):
        # pytest stops the whole session for these, and finishes no report of the test.
        kind = type(excinfo.value).__name__
        text = str(getattr(excinfo.value, "msg", "") or excinfo.value)
        self.interrupted = {
            "phase": "call", "exc_type": kind,
            "message": STOPPED.get(kind, "the test was stopped")
                       + (f" ({text[:200]})" if text else "") + ": that ends the test run, so "
                       "the test counts as failed",
            "frames": _frames(excinfo.tb)}

    def pytest_runtest_makereport(self, item, call):
        # A plain hook (not a wrapper) sees the exception itself; pytest builds the report after.
        self.seen = True
        excinfo = call.excinfo
        if excinfo is None or self.failure is not None:
            return
        if type(excinfo.value).__name__ == "Skipped":
            self.skipped = self.skipped or str(excinfo.value)
            return
        self.failure = {"phase": call.when, "exc_type": _type_name(type(excinfo.value)),
                        "message": _message(excinfo.value), "frames": _frames(excinfo.tb)}

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
