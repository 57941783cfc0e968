"""The pytest plugin in each graded rank: what each test observed, and how it ended on this rank.

    recorder = Recorder(guard, root, begin, finish, seed, rank, size)   # pytest_in_rank.py
    observe(got=result, x=x)       # a test's observe half, through graded/conftest.py's fixture

A test marked ``@pytest.mark.mpi(ranks=[4], hosts=2)`` runs on simulated hosts: as it is set up,
``DLHACK_HOSTNAME`` is this rank's host (``host_of``: in blocks, or round-robin when the test
has a ``placement`` parameter saying so), which the MPI shim answers ``MPI_Get_processor_name``
with, so ChainerMN's communicator and ``dlhack.parallel.hosts`` see two nodes.

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
import os
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


HOSTNAME_ENV = "DLHACK_HOSTNAME"  # what the MPI shim answers MPI_Get_processor_name with
PLACEMENTS = ("block", "round_robin")


def host_of(rank, size, hosts, placement="block"):
    """``nodeH``: the simulated host of ``rank`` of ``size`` over ``hosts`` hosts. ``block``
    fills host 0 first (ranks 0, 1 | 2, 3); ``round_robin`` deals ranks out (0, 2 | 1, 3)."""
    if placement not in PLACEMENTS:
        raise ValueError(f"placement {placement!r}: one of {PLACEMENTS}")
    per_host = -(-size // hosts)
    return f"node{rank // per_host if placement == 'block' else rank % hosts}"


def layout(item):
    """``(hosts, placement)`` of a graded test: ``@pytest.mark.mpi(..., hosts=H)`` and its
    ``placement`` parameter (default block); hosts None when it runs on one host."""
    mpi = item.get_closest_marker("mpi")
    hosts = mpi.kwargs.get("hosts") if mpi else None
    callspec = getattr(item, "callspec", None)
    return hosts, (callspec.params.get("placement", "block") if callspec else "block")


def _frames(tb):
    return [[f.filename, f.lineno, f.name, (f.line or "")[:200]]
            for f in traceback.extract_tb(tb)[-40:]]


class Recorder:
    """Keeps the first failure of each test and what it observed; hands both on as it ends."""

    def __init__(self, guard=None, root=None, begin=None, finish=None, seed=0, rank=0, size=1):
        self.guard, self.root, self.begin, self.finish = guard, root, begin, finish
        self.seed, self.rank, self.size = seed, rank, size
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

    def pytest_runtest_setup(self, item):
        # The test's simulated hosts, before its fixtures make a communicator (ChainerMN asks
        # MPI_Get_processor_name, which the shim answers from this variable).
        hosts, placement = layout(item)
        if hosts:
            os.environ[HOSTNAME_ENV] = host_of(self.rank, self.size, hosts, placement)
        else:
            os.environ.pop(HOSTNAME_ENV, None)

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
