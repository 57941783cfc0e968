"""The adapter: the one way graded tests reach learner code, and the fixtures every lab shares.

Each graded test has two halves side by side (graded/README.md): ``test_NAME(submission, comm,
observe, seed)`` runs in every rank and only hands what learner code produced to ``observe``;
``check_NAME(obs, run)`` runs in the grader's checking process and decides.

Graded tests run only under the grader (``dlhack grade``, ``dlhack.grade.check``). For each run
it copies this file, its neighbours and the lab's folder, writes the learner's answer cells as
``submission.py``, points ``DLHACK_SUBMISSION`` at it and starts the tests under mpiexec at one
rank count. Under a plain ``pytest graded`` nothing here is collected (the project's own suite,
``tests/``, does not look here): tests/grade/ grades the solution notebooks and planted wrong
answers through the grader instead.
"""
import importlib.util
import os
import sys

import pytest

if not os.environ.get("DLHACK_GRADING"):
    collect_ignore_glob = ["*"]


def _stop_messages():
    """IMPORT_FAILURE and MISSING_ANSWER from dlhack/grade/stopearly.py, loaded by its path:
    the grader stops early on them, and importing the dlhack package would import Chainer."""
    home = importlib.util.find_spec("dlhack").submodule_search_locations[0]  # imports nothing
    spec = importlib.util.spec_from_file_location(
        "_dlhack_stopearly", os.path.join(home, "grade", "stopearly.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.IMPORT_FAILURE, module.MISSING_ANSWER


IMPORT_FAILURE, MISSING_ANSWER = _stop_messages()


def pytest_configure(config):
    config.addinivalue_line("markers", "points(n): what passing the test is worth (default 1)")
    config.addinivalue_line("markers", "mpi(ranks=[...], timeout=s): rank counts to run at")


class Answers:
    """The learner's module: a missing name fails the test with a message, not AttributeError."""

    def __init__(self, module):
        self._module = module

    def __getattr__(self, name):
        try:
            return getattr(self._module, name)
        except AttributeError:
            pytest.fail(f"{MISSING_ANSWER} `{name}`: keep the name and signature of the "
                        f"stub (was it renamed, or left out for a syntax error?)", pytrace=False)


@pytest.fixture(scope="session")
def submission():
    """The learner's answer cells, imported as one module (the adapter)."""
    path = os.environ.get("DLHACK_SUBMISSION")
    if not path:
        pytest.fail("no submission: graded tests run through `dlhack grade`", pytrace=False)
    spec = importlib.util.spec_from_file_location("submission", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules["submission"] = module
    try:
        spec.loader.exec_module(module)
    except Exception as err:  # noqa: BLE001 - any failure of learner code is reported
        if isinstance(err, ModuleNotFoundError):
            why = (f"they import `{err.name}`, which is not installed here (the labs need only "
                   f"what the course installs: numpy, mpi4py, chainer, dlhack and the standard "
                   f"library)")
        else:
            why = f"running them raised {type(err).__name__}: {err}"
        # Keep the learner's traceback, so the grader can say which cell and line.
        raise pytest.fail.Exception(f"{IMPORT_FAILURE}: {why}", pytrace=False).with_traceback(
            err.__traceback__) from None
    return Answers(module)


@pytest.fixture
def comm():
    """A duplicate of COMM_WORLD for one test, so stray messages cannot leak between tests."""
    from mpi4py import MPI

    comm = MPI.COMM_WORLD.Dup()
    yield comm
    comm.Free()


@pytest.fixture
def observe(request):
    """``observe(got=..., x=...)``: hand the grader what learner code produced (plain values and
    numpy arrays; grade/obsformat.py). The test's check half gets them as ``obs["got"]``."""
    record = getattr(request.config, "dlhack_observe", None)
    if record is None:
        pytest.fail("no observer: graded tests run through `dlhack grade`", pytrace=False)
    return lambda **values: record(values)


@pytest.fixture
def seed(request):
    """The grader's draw for this launch's inputs (an int); the check half gets it as run.seed."""
    return getattr(request.config, "dlhack_seed", 0)
