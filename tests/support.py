"""What every test needs, written once: the checkout, the course's environment, and the
processes a job left behind.

    from tests.support import ROOT, course_env, processes, left_running, survivors

- ``ROOT``, ``LESSONS``: the checkout, and its lesson notebooks in order. ``tests`` is a package (so two rooms may hold test files of one name),
  and pytest puts the checkout first on ``sys.path`` when it imports ``tests/conftest.py``: this
  module imports the same way in every room, and in the ranks pytest-isolate-mpi starts.
- ``course_env()``: what ``make test`` sets, one BLAS thread per rank
  (``dlhack.jobs.mpiexec.one_thread_env``) and this environment's ``bin`` first on ``PATH``, so
  that its ``mpiexec`` matches its mpi4py. tests/conftest.py sets it for the whole session.
- ``processes``, ``left_running``, ``survivors``: what a job left running (psutil).

Jobs themselves are started and killed by the package's one supervisor (``dlhack.jobs.run``,
``dlhack.jobs.supervise``), never by a Popen-with-a-timeout written for one test.
"""
import os
import sys
import time
from pathlib import Path

import psutil

from dlhack.jobs.mpiexec import one_thread_env

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent  # the venv's bin: its mpiexec matches its mpi4py
SHARED_ENJA = ROOT.parent / "shared" / "data" / "small_parallel_enja"
SCRIPTS = ROOT / "tests" / "tools" / "scripts"  # small broken MPI scripts for dlhack run
LESSONS = sorted((ROOT / "lessons").glob("*.ipynb"))  # 00_getting_started.ipynb, ...


def course_env(env=None, threads=1, **extra):
    """A copy of ``env`` (default: this process's) as ``make test`` runs the course: ``BIN``
    first on ``PATH`` and ``threads`` BLAS threads per rank (None: as ``env`` has them)."""
    env = dict(os.environ if env is None else env)
    path = env.get("PATH", "")
    if not path.startswith(f"{BIN}{os.pathsep}"):
        path = f"{BIN}{os.pathsep}{path}"
    return one_thread_env(env, threads, PATH=path, **extra)


def _running(proc):
    try:
        return proc.status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


def processes(*texts, below=None):
    """The live processes but this one, zombies aside, that name one of ``texts`` in their
    command line or working directory (a run folder, a script's path, ``"sleep 317.27"``), or
    that descend from the pid ``below``; a list of ``psutil.Process`` in pid order."""
    found = {}
    if below is not None:
        try:
            found.update((p.pid, p) for p in psutil.Process(below).children(recursive=True))
        except psutil.NoSuchProcess:
            pass
    if texts:
        for proc in psutil.process_iter(["cmdline", "cwd"]):
            text = " ".join(proc.info["cmdline"] or []) + " " + (proc.info["cwd"] or "")
            if any(str(t) in text for t in texts):
                found[proc.pid] = proc
    found.pop(os.getpid(), None)
    return [proc for _, proc in sorted(found.items()) if _running(proc)]


def describe(procs):
    """``"PID COMMAND LINE"`` of each process still there."""
    lines = []
    for proc in procs:
        try:
            lines.append(f"{proc.pid} {' '.join(proc.cmdline())}")
        except psutil.NoSuchProcess:
            pass
    return lines


def left_running(*texts, below=None, wait=0.0):
    """``describe(processes(*texts, below=below))``, after waiting up to ``wait`` seconds for
    them to go (a SIGKILLed process takes a moment to disappear); [] when nothing is left."""
    end = time.monotonic() + wait
    while True:
        left = describe(processes(*texts, below=below))
        if not left or time.monotonic() >= end:
            return left
        time.sleep(0.1)


def survivors(procs, wait=0.0):
    """Those of ``procs`` still running after up to ``wait`` seconds (zombies count as gone).

    Take ``procs`` before the kill: once a parent dies, its orphans lose their link to it.
    """
    _, alive = psutil.wait_procs(procs, timeout=wait)
    return [proc for proc in alive if _running(proc)]
