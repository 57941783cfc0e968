"""The grader's MPI profiling shim (``pmpi_shim.c``): built once with the venv's mpicc, then loaded
into every graded rank, where it writes down each message the rank sends (traffic.py reads it).

    python -c 'from dlhack.grade.pmpi import main; main()'   # build it now, as `make venv` does
    path, why_not = pmpi.shim()        # the library, or None and a sentence saying why not

The library goes beside the environment's own files (``PREFIX/lib/dlhack/``), which learners
cannot write on a shared machine, else into ``$XDG_CACHE_HOME/dlhack/`` (``~/.cache``); its name
holds the digest of the source and of the compiler, so a changed shim is built again. When a
grade counts (nbgrader's ``NBGRADER_EXECUTION``: learner code may have run as this user before)
the per-user cache is not trusted, and the shim is built into the grading's private folder.
Building takes about a second, once; ``mpicc`` (the mpich wheel's, around the system's ``cc``)
must be there. Without it the grader still grades, but every test that checks messages ends in
an error that names the reason: it never counts messages some other way.
"""
import functools
import hashlib
import os
import shutil
import sys
from pathlib import Path

from dlhack.cbuild import shared_library

SOURCE = Path(__file__).with_name("pmpi_shim.c")
NAME = "libdlhack_pmpi"


def find_mpicc():
    """``$DLHACK_MPICC``, else the mpicc beside this Python (the mpich wheel's), else PATH's."""
    beside = Path(sys.executable).with_name("mpicc")
    return (os.environ.get("DLHACK_MPICC") or (str(beside) if beside.exists() else None)
            or shutil.which("mpicc"))


def file_name(mpicc):
    """``libdlhack_pmpi-DIGEST.so``: the digest of the source and of the compiler used."""
    digest = hashlib.sha256(SOURCE.read_bytes() + os.path.realpath(mpicc).encode())
    return f"{NAME}-{digest.hexdigest()[:16]}.so"


def places(private=None):
    """Where the library may be, most trusted first."""
    found = [Path(sys.prefix) / "lib" / "dlhack"]
    if not os.environ.get("NBGRADER_EXECUTION"):
        found.append(Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache") / "dlhack")
    if private is not None:
        found.append(Path(private))
    return found


def build(mpicc, dest):
    """Compile the shim to ``dest`` (atomically); returns None, or why it failed."""
    return shared_library([mpicc, "-O2"], SOURCE, dest, mode=0o755, tail=500)


@functools.lru_cache(maxsize=4)
def shim(private=None):
    """``(path, None)`` of the built shim, building it where it can; else ``(None, why)``."""
    mpicc = find_mpicc()
    if mpicc is None:
        return None, "no mpicc was found to build the grader's MPI shim (pip install mpich)"
    name = file_name(mpicc)
    candidates = places(private)
    for place in candidates:
        if (place / name).is_file():
            return place / name, None
    reasons = []
    for place in candidates:
        try:
            why = build(mpicc, place / name)
        except OSError as err:  # a folder that cannot be made here: try the next
            why = str(err)
        if why is None:
            return place / name, None
        reasons.append(why)
    return None, f"the grader's MPI shim could not be built: {reasons[-1]}"


def main(argv=None):
    path, why = shim()
    if path is None:
        print(f"dlhack: {why}", file=sys.stderr)
        return 1
    print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
