"""Where a lab's graded tests live, and what each declares: rank counts, points, timeout.

The graded tests are not installed with the package. They live in the repository, in
``graded/NAME/test_EXERCISE.py`` (beside ``labs/`` and ``solutions/``), found from the package's own path (src layout:
``src/dlhack/grade/plan.py`` -> the checkout) or from ``DLHACK_ROOT``. A test declares

    @pytest.mark.points(2)                              # what passing it is worth (default 1)
    @pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=10)    # run once at each rank count

and passes (earns its points) only when it passes at every rank count it declares. The
exercise a test grades is its file name: ``test_allreduce_ring.py`` grades ``allreduce_ring``.
"""
import functools
import hashlib
import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from dlhack.jobs.mpiexec import one_thread_env, without_launcher

ENV_ROOT = "DLHACK_ROOT"
DEFAULT_TIMEOUT = 30.0
RANK_SCRIPT = Path(__file__).with_name("pytest_in_rank.py")  # run by its path
# The copied test tree gets its own ini file: pytest must not climb into a project's pyproject.
PYTEST_INI = (b"[pytest]\naddopts =\nmarkers =\n    points: what the test is worth\n"
              b"    mpi: rank counts and timeout\n")


class LabError(Exception):
    """The grader cannot grade a lab at all: missing tests, a test file that does not import."""


def repo_root():
    """The checkout holding graded/, solutions and labs: ``$DLHACK_ROOT`` or the package's."""
    if os.environ.get(ENV_ROOT):
        return Path(os.environ[ENV_ROOT]).resolve()
    return Path(__file__).resolve().parents[3]


def graded_root(root=None):
    """``ROOT/graded``, or a LabError that says how to point the grader at it."""
    path = Path(root or repo_root()) / "graded"
    if not (path / "conftest.py").is_file():
        raise LabError(f"no graded tests at {path} (graded/conftest.py is missing). The graded "
                       f"tests ship with the repository, not the package: run from a checkout, or "
                       f"set {ENV_ROOT} to one.")
    return path


def lab_names(root=None):
    """The labs that have graded tests, e.g. ``["02_collectives"]``."""
    base = graded_root(root)
    return sorted(p.name for p in base.iterdir() if p.is_dir() and any(p.glob("test_*.py")))


def child_env(**extra):
    """The environment for grader subprocesses: one BLAS thread, no stray MPI or pytest settings."""
    env = {k: v for k, v in without_launcher(os.environ).items()
           if not k.startswith(("PYTEST_", "DLHACK_GRADE"))}
    return one_thread_env(
        env, PYTHONDONTWRITEBYTECODE="1", PYTHONUNBUFFERED="1", DLHACK_GRADING="1",
        # Plugins installed for the project's own tests (pytest-isolate-mpi would relaunch
        # `mpi` tests under its own mpiexec) have no place inside a graded rank.
        PYTEST_DISABLE_PLUGIN_AUTOLOAD="1",
        # A rank waiting for a message spins; on a busy machine with fewer cores than ranks
        # that steals the CPU the other ranks need. Sleep 1 us after 64 idle polls instead.
        MPIR_CVAR_CH4_PROGRESS_THROTTLE="1",
        MPIR_CVAR_CH4_PROGRESS_THROTTLE_NO_PROGRESS_COUNT="64", **extra)


@dataclass(frozen=True)
class GradedTest:
    """One graded test: it earns ``points`` when it passes at every count in ``ranks``."""

    nodeid: str
    exercise: str
    name: str
    ranks: tuple
    timeout: float
    points: float
    doc: str = ""
    checked: bool = False  # decided outside the ranks by its check half (checker.py)
    params: tuple = ()     # a parametrized test's parameters, as (name, value) pairs


@dataclass(frozen=True)
class Plan:
    """A lab's graded tests in lesson order, and the test files to copy for every run."""

    lab: str
    tests: tuple
    files: tuple  # ((relative path, bytes), ...)

    @property
    def exercises(self):
        return list(dict.fromkeys(t.exercise for t in self.tests))

    def points(self, exercise=None):
        return sum(t.points for t in self.tests if exercise in (None, t.exercise))


def lab_files(lab, root=None):
    """What a run of ``lab`` needs: graded/*.py (the adapter) and the lab's own folder."""
    base = graded_root(root)
    if not (base / lab).is_dir():
        raise LabError(f"no graded tests for lab {lab!r} in {base} "
                       f"(labs: {', '.join(lab_names(root))})")
    files = {"pytest.ini": PYTEST_INI}
    files.update({p.name: p.read_bytes() for p in sorted(base.glob("*.py"))})
    for path in sorted((base / lab).rglob("*")):
        if path.is_file() and "__pycache__" not in path.parts:
            files[path.relative_to(base).as_posix()] = path.read_bytes()
    return tuple(files.items())


def write_files(files, dest):
    """Write ``lab_files`` output under ``dest``; returns ``{path: sha256}`` to check later."""
    digests = {}
    for rel, data in files:
        path = Path(dest) / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
        digests[rel] = hashlib.sha256(data).hexdigest()
    return digests


def load_plan(lab, root=None):
    """Collect ``lab``'s graded tests (in a subprocess: no learner code involved)."""
    return _collect(lab, lab_files(lab, root))


ITEM_KEYS = {"nodeid", "file", "name", "ranks", "timeout", "points", "doc", "checked",
             "params"}  # what its Lister gives


def cache_file(lab, files):
    """Where the listing of ``lab``'s tests as ``files`` are is kept between sessions, or None.

    Listing a lab's tests costs a Python that imports pytest and the tests (1-3 s), the first
    check cell of every session. The listing depends on the test files only, so it is kept
    under ``$XDG_CACHE_HOME/dlhack/plans`` (``~/.cache``), named by the digest of every file.
    Never when a grade counts (nbgrader's ``NBGRADER_EXECUTION``): learner code that ran in
    the same kernel could have written it.
    """
    if os.environ.get("NBGRADER_EXECUTION"):
        return None
    digest = hashlib.sha256(json.dumps([lab, [(rel, hashlib.sha256(data).hexdigest())
                                              for rel, data in files]]).encode()).hexdigest()
    base = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    return base / "dlhack" / "plans" / f"{lab}-{digest[:32]}.json"


def _listing(lab, files):
    """``{"items": [...], "errors": [...]}``: pytest_in_rank.py's listing of the lab's tests."""
    cached = cache_file(lab, files)
    if cached is not None:
        try:
            listing = json.loads(cached.read_text())
            if (isinstance(listing, dict) and listing.get("errors") == []
                    and all(isinstance(item, dict) and ITEM_KEYS <= set(item)
                            for item in listing.get("items", ()))):
                return listing
        except (OSError, ValueError):
            pass  # not there yet, or unreadable: list them again
    with tempfile.TemporaryDirectory(prefix="dlhack-collect-") as tmp:
        write_files(files, tmp)
        out = Path(tmp) / "plan.json"
        proc = subprocess.run([sys.executable, str(RANK_SCRIPT), "collect", tmp, lab, str(out)],
                              cwd=tmp, env=child_env(), capture_output=True, text=True, timeout=120,
                              check=False)
        if not out.exists():
            raise LabError(f"could not list the tests of {lab}:\n"
                           f"{proc.stdout[-3000:]}{proc.stderr[-2000:]}")
        listing = json.loads(out.read_text())
    if cached is not None and not listing["errors"]:
        try:
            cached.parent.mkdir(parents=True, exist_ok=True)
            tmp = cached.with_name(f".{cached.name}.{os.getpid()}")
            tmp.write_text(json.dumps(listing))
            os.replace(tmp, cached)
        except OSError:
            pass  # a read-only home: list them again next time
    return listing


@functools.lru_cache(maxsize=16)
def _collect(lab, files):
    listing = _listing(lab, files)
    if listing["errors"]:
        raise LabError(f"the graded tests of {lab} do not import:\n" + "\n".join(listing["errors"]))
    tests = []
    for item in listing["items"]:
        stem = item["file"][:-3]
        if not stem.startswith("test_"):
            raise LabError(f"{item['nodeid']}: graded test files are named test_EXERCISE.py")
        tests.append(GradedTest(
            nodeid=item["nodeid"], exercise=stem[len("test_"):], name=item["name"],
            ranks=tuple(sorted(set(item["ranks"]))), points=float(item["points"]),
            timeout=float(item["timeout"] or DEFAULT_TIMEOUT), doc=item["doc"],
            checked=bool(item["checked"]), params=tuple(sorted(item["params"].items()))))
    if not tests:
        raise LabError(f"lab {lab} has no graded tests")
    return Plan(lab=lab, tests=tuple(tests), files=files)
