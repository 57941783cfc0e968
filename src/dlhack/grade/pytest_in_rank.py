"""The grader's script in each rank of a graded launch: pytest over the tests' observe halves.

    mpiexec -n N python B/rankwrap.py P B/pytest_in_rank.py run TESTS_ROOT NODEID [NODEID ...]
    python pytest_in_rank.py collect TESTS_ROOT LAB OUT.json   # a lab's tests and their markers

Run mode runs the given tests of one exercise, in order, at N ranks, in one pytest session: one
launch, one import of Chainer and of the learner's answers, however many tests (the grader's
``batch.py`` starts the rest again in a fresh launch when a test ends the session early).

It is never imported as ``dlhack.grade.pytest_in_rank``: importing the package would import
Chainer in every rank (0.3 s each). The grader copies it, with the files it loads by their path
(recorder.py, guard.py, obsformat.py, traffic.py, the MPI shim) and rankwrap.py, into a folder
``B`` of each run that the sandbox shows read-only; ``P`` is the run's folder.

What every supervised rank needs comes from ``dlhack/jobs/rankwrap.py``, the same wrapper as
``dlhack run``'s: the rank's output file, its pid file, SIGUSR1 stack dumps and fatal-signal
dumps, ``MPI_Abort`` on an uncaught error. This script keeps what is the grader's own. Run
mode, in order: take the run's folder, id and seed (``DLHACK_GRADE_DIR``, ``DLHACK_RUN_ID``,
``DLHACK_SEED``) out of the environment; load the MPI shim (``DLHACK_PMPI``); import MPI, numpy
and pytest; wait at a barrier; run the tests with pytest and ``recorder.py``'s plugin. As test
I starts and ends, the shim's log gets a mark (traffic.py); then what the test observed is
written to ``obs.RANK.I`` (obsformat.py) and its record to ``result.RANK.I.json``, naming this
rank, the size, the test and the run id; at the end, ``result.RANK.end.json`` gives pytest's
exit status. None of it can pass a test: a test decided outside the rank (checker.py) passes
only when its check passes what was observed, and a record can only lose points (the threat
model is in the README). ``guard.py``'s snapshot of what the checks rest on is still taken and
compared as each test ends: a nicety that names tampering, no longer what stops it.
"""
import importlib.util
import json
import os
import sys
import time
from pathlib import Path


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
            name = getattr(item, "originalname", item.name)
            callspec = getattr(item, "callspec", None)
            self.items.append({
                "nodeid": item.nodeid,
                "file": item.path.name,
                "name": item.name,
                "ranks": [ranks] if isinstance(ranks, int) else list(ranks),
                "timeout": mpi.kwargs.get("timeout") if mpi else None,
                "points": points.args[0] if points and points.args else 1,
                "doc": (item.obj.__doc__ or "").strip().split("\n")[0],
                # decided outside the ranks (checker.py) when its module has check_NAME
                "checked": callable(getattr(item.module, "check_" + name[5:], None)),
                "params": {k: _plain(v) for k, v in callspec.params.items()} if callspec else {},
            })


def _plain(value):
    """A test's parameter as JSON carries it (its check half gets it back), else its repr."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    return repr(value)


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


def load_sibling(name):
    """``NAME.py`` from beside this file, by its path (this script imports no dlhack)."""
    path = Path(__file__).resolve().with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_dlhack_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def load_shim(path):
    """``(library, None)``: the MPI shim loaded ahead of libmpi; else ``(None, why not)``.

    Loaded into the global scope before mpi4py starts MPI, the shim's ``MPI_Send`` (and the
    rest) come before libmpi's for every call mpi4py makes, as ``LD_PRELOAD`` would have them,
    but in this process only: not in mpiexec, bwrap, or what the learner's code starts.
    """
    if not path:
        return None, "the grader gave this rank no MPI shim"
    import ctypes

    try:
        return ctypes.CDLL(path, mode=os.RTLD_GLOBAL), None
    except OSError as err:
        return None, f"the grader's MPI shim did not load: {err}"


def checked_shim(shim, why_not, private, rank):
    """The shim if it opened this rank's log; else None, and ``pmpi.RANK.error`` says why."""
    if shim is not None and not (private / f"traffic.{rank}").is_file():
        shim, why_not = None, "the grader's MPI shim opened no log"
    if why_not:
        (private / f"pmpi.{rank}.error").write_text(why_not)
    return shim


def guarded():
    """``(guard, Recorder)``: the guard with this script's own parts snapshotted (the rest once
    pytest has collected the tests), and the recorder's class."""
    guard = load_sibling("guard").Guard()
    recorder_class = load_sibling("recorder").Recorder
    guard.take_object("Recorder", recorder_class)
    guard.take_object("pytest_in_rank.judge", judge)
    guard.take_object("pytest_in_rank._write", _write)
    return guard, recorder_class


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
    seed = int(os.environ.pop("DLHACK_SEED", "0") or 0)
    shim, shim_error = load_shim(os.environ.pop("DLHACK_PMPI", ""))
    if sys.path and Path(sys.path[0]).resolve() in (here, private.resolve()):
        del sys.path[0]  # nothing of the grader's is for learner code to import
    import numpy  # noqa: F401 - loaded now, so that its functions are in the snapshot
    import pytest
    from mpi4py import MPI  # starts MPI, and the shim its log; no learner code has run yet

    os.environ.pop("DLHACK_TRAFFIC", None)  # what learner code starts is not logged
    comm = MPI.COMM_WORLD
    rank, size = comm.rank, comm.size
    shim = checked_shim(shim, shim_error, private, rank)
    obsformat, marks = load_sibling("obsformat"), load_sibling("traffic").marks
    index = {nodeid: i for i, nodeid in enumerate(nodeids)}
    written = set()
    clock = [time.monotonic()]

    def begin(nodeid):
        if shim is not None and nodeid in index:
            shim.MPI_Pcontrol(marks(index[nodeid])[0])

    def finish(nodeid, outcome, observed):
        if nodeid not in index or nodeid in written:
            return  # not one of the tests asked for
        i, now = index[nodeid], time.monotonic()
        if shim is not None:
            shim.MPI_Pcontrol(marks(i)[1])  # flushes the log: it holds the test before obs does
        if outcome["outcome"] == "passed":
            try:
                obsformat.write(private / f"obs.{rank}.{i}", observed)
            except OSError as err:
                outcome = {"outcome": "error", "message": f"what the test observed could not be "
                                                          f"written: {err}"}
        record = {"rank": rank, "size": size, "nodeid": nodeid, "run_id": run_id,
                  "duration_s": round(now - clock[0], 3), **outcome}
        clock[0] = now
        _write(private, f"result.{rank}.{i}.json", judge(record, guard.changed()))
        written.add(nodeid)

    guard, recorder_class = guarded()
    recorder = recorder_class(guard, root, begin, finish, seed)
    comm.Barrier()
    clock[0] = time.monotonic()
    exit_code = pytest.main([str(Path(root) / nodeid) for nodeid in nodeids]
                            + _pytest_args(root), plugins=[recorder])
    if recorder.current is not None:  # interrupted: pytest never finished that test's report
        finish(recorder.current, recorder.record(), {})
    if recorder.collect_error is not None:
        for nodeid in nodeids:
            finish(nodeid, recorder.record(), {})
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
