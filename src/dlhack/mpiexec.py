"""Which ``mpiexec`` to run: the one that belongs to this Python's mpi4py.

The mpich wheel puts ``mpiexec`` beside the virtual environment's ``python``. A notebook kernel
or a script started without the venv on PATH would otherwise find some other MPI's launcher
(or none), the classic silent mismatch that ``dlhack doctor`` explains.
"""
import os
import shutil
import sys
from pathlib import Path


def venv_mpiexec():
    """The mpiexec beside this Python, or None."""
    beside = Path(sys.executable).with_name("mpiexec")
    return str(beside) if beside.exists() else None


def find_mpiexec(default="mpiexec"):
    """``$DLHACK_MPIEXEC``, else the venv's mpiexec, else the first on PATH, else ``default``."""
    return (os.environ.get("DLHACK_MPIEXEC") or venv_mpiexec() or shutil.which("mpiexec")
            or default)
