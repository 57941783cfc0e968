"""The MPI checks of ``dlhack doctor``: which MPI mpi4py loads, which mpiexec is first on PATH, and
whether N ranks started by that mpiexec really see each other.

The classic silent failure: mpi4py loads one MPI (MPICH, from the ``mpich`` wheel) while the
first ``mpiexec`` on PATH belongs to another (a system Open MPI). That mpiexec starts N
processes, but none of them can reach it, so each one starts MPI alone: every rank reports
rank 0 of 1, and training runs N times side by side, with no error and no speed-up.
:func:`check_mpiexec` compares the two names; :func:`check_roundtrip` sees the symptom itself.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from dataclasses import dataclass, field

from dlhack.jobs.mpiexec import venv_mpiexec
from dlhack.tools.check import Result, probe

LIBRARY_PROBE = """
import json, mpi4py
mpi4py.rc.initialize = False  # only inspected: Get_library_version works before MPI_Init
mpi4py.rc.finalize = False
from mpi4py import MPI
try:
    with open("/proc/self/maps") as f:  # the libmpi this process really loaded
        libmpi = sorted({l.split()[-1] for l in f if "libmpi" in l and "/" in l})
except OSError:
    libmpi = []
print(json.dumps({"mpi4py": mpi4py.__version__, "library": MPI.Get_library_version(),
                  "module": MPI.__file__, "libmpi": libmpi, "config": mpi4py.get_config()}))
"""
ROUNDTRIP = ("from mpi4py import MPI; comm = MPI.COMM_WORLD; total = comm.allreduce(comm.rank); "
             "print(f'roundtrip rank={comm.rank} size={comm.size} total={total}', flush=True)")
REPLY = re.compile(r"roundtrip rank=(\d+) size=(\d+) total=(\d+)")


@dataclass
class RoundTrip:
    """What ``mpiexec -n N python -c ROUNDTRIP`` did: one (rank, size, total) per rank."""

    replies: list = field(default_factory=list)
    returncode: int = 0
    timed_out: bool = False
    output: str = ""
    seconds: float = 0.0


@dataclass
class MPIFacts:
    library: dict  # LIBRARY_PROBE's answer, or {"error": ...}
    mpiexec: str  # the first mpiexec on PATH, or None
    mpiexec_version: str  # its --version text
    roundtrip: RoundTrip


def flavour(text):
    """Which MPI a version text belongs to: ``mpiexec --version`` or Get_library_version()."""
    text = (text or "").lower()
    if "intel(r) mpi" in text or "intel mpi" in text:
        return "Intel MPI"
    if "open mpi" in text or "openrte" in text or "open-mpi" in text:
        return "Open MPI"
    if "mvapich" in text:
        return "MVAPICH"
    if "mpich" in text or "hydra" in text:  # MPICH's mpiexec is hydra; its banner says HYDRA
        return "MPICH"
    return "unknown"


# Intel MPI and MVAPICH derive from MPICH: their mpiexec usually starts MPICH programs.
FAMILY = {"MPICH": "MPICH", "Intel MPI": "MPICH", "MVAPICH": "MPICH", "Open MPI": "Open MPI"}


def check_mpi4py(library):
    """mpi4py must load an MPI library; say which one and from where."""
    if "library" not in library:
        return Result("mpi4py", "FAIL", f"cannot load an MPI library: {library.get('error')}",
                      "pip install mpi4py mpich")
    name = " ".join(library["library"].split("\n")[0].split())  # "MPICH Version: 5.0.2"
    where = ", ".join(library.get("libmpi") or []) or "?"
    # mpi4py >= 4 wheels hold one extension per MPI (MPI.mpich..., MPI.openmpi...); older
    # builds were compiled for one MPI, and get_config() names the mpicc they were built with.
    built = re.search(r"MPI\.(\w+)\.", os.path.basename(library.get("module", "")))
    built = built.group(1) if built else (library.get("config") or {}).get("mpicc", "?")
    return Result("mpi4py", "OK", f"{library['mpi4py']} loads {name} from {where} "
                  f"(extension built for: {built})")


def check_mpiexec(path, version_text, library, beside=None):
    """The first mpiexec on PATH must belong to the MPI that mpi4py loads.

    No mpiexec on PATH at all is only INFO when the environment has its own (``beside``, the
    mpich wheel's next to python): dlhack's launches use that one, and a bare ``mpiexec`` typed
    in a shell that has not activated the environment fails loudly, not silently.
    """
    better = venv_mpiexec()
    fix = (f"use {better}: activate the environment (. .venv/bin/activate) so it comes first"
           if better else "put the mpiexec of mpi4py's MPI first on PATH (pip install mpich)")
    if path is None and beside:
        return Result("mpiexec", "INFO", f"none on PATH (environment not activated); dlhack "
                      f"run, %%mpiexec and the grader use {beside}",
                      "to type `mpiexec` and `dlhack` bare in a shell: . .venv/bin/activate")
    if path is None:
        return Result("mpiexec", "FAIL", "no mpiexec on PATH", fix)
    theirs = flavour(version_text)
    ours = flavour(library.get("library"))
    # The first line with a version number: "mpirun (Open MPI) 4.1.6", hydra's "Version: 5.0.2".
    numbered = [line for line in (version_text or "").splitlines() if re.search(r"\d\.\d", line)]
    banner = " ".join(numbered[0].split()) if numbered else "no version in --version"
    detail = f"{path}: {theirs} ({banner})"
    if theirs == ours:
        return Result("mpiexec", "OK", f"{detail}, the same MPI as mpi4py's")
    if FAMILY.get(theirs) == FAMILY.get(ours) and theirs != "unknown":
        return Result("mpiexec", "WARN", f"{detail}; mpi4py loads {ours}, a relative that "
                      "usually works: the round trip below tells", fix)
    return Result("mpiexec", "FAIL", f"{detail}, but mpi4py loads {ours}: the ranks it starts "
                  "cannot reach it, so each one runs alone as rank 0 of 1", fix)


def run_roundtrip(mpiexec, n, env=None, timeout=60):
    """Start ``n`` ranks that each report rank, size and an allreduce; kill them on timeout."""
    start = time.monotonic()
    proc = subprocess.Popen([mpiexec, "-n", str(n), sys.executable, "-c", ROUNDTRIP],
                            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, text=True, env=env,
                            start_new_session=True)  # so the whole job can be killed at once
    try:
        output, timed_out = proc.communicate(timeout=timeout)[0], False
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        output, timed_out = proc.communicate()[0], True
    replies = [tuple(map(int, m.groups())) for m in REPLY.finditer(output or "")]
    return RoundTrip(sorted(replies), proc.returncode, timed_out, output or "",
                     time.monotonic() - start)


def check_roundtrip(n, trip):
    """Every one of ``n`` ranks must answer with its own rank, size ``n``, and the right sum."""
    name = "roundtrip"
    tail = " | ".join(trip.output.strip().splitlines()[-3:])
    by_hand = (f"run by hand: mpiexec -n {n} python -c \"from mpi4py import MPI; "
               "print(MPI.COMM_WORLD.rank, MPI.COMM_WORLD.size)\"")
    if trip.timed_out:
        return Result(name, "FAIL", f"mpiexec -n {n} did not finish in {trip.seconds:.0f} s "
                      f"and was killed ({tail or 'no output'})", by_hand)
    sizes = {size for _, size, _ in trip.replies}
    if n > 1 and sizes == {1}:
        return Result(name, "FAIL", f"{len(trip.replies)} processes each say they are rank 0 "
                      "of 1: mpiexec and mpi4py belong to different MPIs (see the mpiexec "
                      "line), so every process runs MPI alone",
                      "make the mpiexec line OK, then run dlhack doctor again")
    expected = [(rank, n, n * (n - 1) // 2) for rank in range(n)]
    if trip.replies != expected:
        return Result(name, "FAIL", f"expected ranks 0..{n - 1} of {n}, got "
                      f"{trip.replies or 'no answer'} (exit status {trip.returncode}; {tail})",
                      by_hand)
    return Result(name, "OK", f"mpiexec started ranks 0..{n - 1} of {n}; allreduce correct; "
                  f"{trip.seconds:.1f} s")


def gather_mpi(n, env, timeout=60):
    """The MPI facts of this machine: mpi4py's library, PATH's mpiexec, a round trip on it.

    The round trip runs PATH's mpiexec, the one a learner's bare ``mpiexec`` runs; with none on
    PATH, the environment's own (``venv_mpiexec``), the one dlhack's launches use.
    """
    library = probe(LIBRARY_PROBE, env)
    mpiexec = shutil.which("mpiexec", path=env.get("PATH"))
    version, trip = "", RoundTrip(timed_out=False, output="no mpiexec", returncode=-1)
    if mpiexec is None and venv_mpiexec():
        trip = run_roundtrip(venv_mpiexec(), n, env, timeout)
    if mpiexec:
        try:
            done = subprocess.run([mpiexec, "--version"], capture_output=True, text=True,
                                  stdin=subprocess.DEVNULL, timeout=20, env=env, check=False)
            version = done.stdout + done.stderr
        except subprocess.TimeoutExpired:
            version = ""
        trip = run_roundtrip(mpiexec, n, env, timeout)
    return MPIFacts(library, mpiexec, version, trip)
