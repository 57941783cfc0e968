"""Which ``mpiexec`` to run, and the one way this package builds an mpiexec command line.

    cmd, env = mpiexec_command(2, [sys.executable, "-m", "dlhack.train"])   # demo, benches
    subprocess.run(cmd, env=env, check=True)

The mpich wheel puts ``mpiexec`` beside the virtual environment's ``python``. A notebook kernel
or a script started without the venv on PATH would otherwise find some other MPI's launcher
(or none), the classic silent mismatch that ``dlhack doctor`` explains.

Every job this package starts gets one BLAS thread per rank (:func:`one_thread_env`): with
OpenBLAS's default of one thread per core, N ranks on N cores run N x N threads and fight.

Standard library only: the rank wrapper (``rankwrap.py``, run by its path) loads this file too,
for :func:`launched_rank`, without importing the dlhack package (and Chainer with it).
"""
import os
import shutil
import sys
from pathlib import Path

# The variable each MPI launcher sets to the rank (MPICH/Intel hydra, Open MPI, PMIx, Slurm).
# One of them in the environment means "this process was launched by mpiexec".
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
# Prefixes of what a launcher leaves in a rank's environment; a job started from inside a rank
# (a test, the grader) must not inherit them, or its mpiexec joins the outer job.
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "HYDRA_", "MPIR_", "OMPI_")
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def launched_rank(env=os.environ):
    """The rank this process has under mpiexec, or None when no launcher started it."""
    for name in RANK_VARIABLES:
        if env.get(name, "").isdigit():
            return int(env[name])
    return None


def one_thread_env(env=None, threads=1, **extra):
    """A copy of ``env`` (default: this process's) with ``threads`` BLAS threads per rank.

    ``threads=None`` keeps the thread settings ``env`` has: ``dlhack run`` must reproduce the
    learner's environment as it is, oversubscription included (lesson 6, bug f).
    """
    env = dict(os.environ if env is None else env)
    if threads is not None:
        env.update({name: str(threads) for name in THREAD_VARIABLES})
    env.update(extra)
    return env


def without_launcher(env):
    """``env`` without the variables an outer mpiexec set (see LAUNCHER_PREFIXES)."""
    return {k: v for k, v in env.items() if not k.startswith(LAUNCHER_PREFIXES)}


def venv_mpiexec():
    """The mpiexec beside this Python, or None."""
    beside = Path(sys.executable).with_name("mpiexec")
    return str(beside) if beside.exists() else None


def find_mpiexec(default="mpiexec"):
    """``$DLHACK_MPIEXEC``, else the venv's mpiexec, else the first on PATH, else ``default``."""
    return (os.environ.get("DLHACK_MPIEXEC") or venv_mpiexec() or shutil.which("mpiexec")
            or default)


def mpiexec_command(n, argv, env=None, threads=1, mpiexec=None):
    """``([mpiexec, "-n", n, *argv], env)`` with ``threads`` BLAS threads per rank (None: as is).

    Args:
        n: the number of ranks.
        argv: what every rank runs, e.g. ``[sys.executable, "-m", "dlhack.train"]``.
        env: the environment to start from (default: this process's).
        threads: BLAS threads per rank; None keeps ``env``'s settings.
        mpiexec: the launcher (default: :func:`find_mpiexec`).
    """
    cmd = [mpiexec or find_mpiexec(), "-n", str(n), *map(str, argv)]
    return cmd, one_thread_env(env, threads)
