"""Which ``mpiexec`` to run, and the one way this package builds an mpiexec command line.

    cmd, env = mpiexec_command(2, [sys.executable, "-m", "dlhack.train"])   # demo, benches
    subprocess.run(cmd, env=env, check=True)

The mpich wheel puts ``mpiexec`` beside the virtual environment's ``python``. A notebook kernel
or a script started without the venv on PATH would otherwise find some other MPI's launcher
(or none), the classic silent mismatch that ``dlhack doctor`` explains.

Every job this package starts gets one BLAS thread per rank (:func:`one_thread_env`): with
OpenBLAS's default of one thread per core, N ranks on N cores run N x N threads and fight.

Where the ranks go, on purpose (:func:`local_env`, the one place that decides): every mpiexec
this package starts (``dlhack run``, ``%%mpiexec``, the grader, ``dlhack demo``, the benches)
puts its ranks on this node, within the cores this process was given, even inside a multi-node
allocation. The grader must: its sandbox has no network to reach the scheduler. The others
start where the learner works (a hub server is one job on one node), and a job step started
from inside the server's step would wait for CPUs that step already holds. A job script that
wants the allocation's other nodes writes its own ``mpiexec`` line, the scheduler's way
(jobs/train_slurm.sh: hydra reads the Slurm allocation and starts a proxy per node with srun).

Standard library only: the rank wrapper (``rankwrap.py``, run by its path) loads this file too,
for :func:`launched_rank`, without importing the dlhack package (and Chainer with it).
"""
import os
import shutil
import sys
from pathlib import Path

# The variable each MPI launcher sets to the rank (MPICH/Intel hydra, Open MPI, PMIx, Slurm).
# One of them in the environment means "this process was launched by mpiexec" (SLURM_PROCID
# only in a step of several tasks: see launched_rank).
RANK_VARIABLES = ("PMI_RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "SLURM_PROCID")
# Prefixes of what a launcher leaves in a rank's environment; a job started from inside a rank
# (a test, the grader) must not inherit them, or its mpiexec joins the outer job.
LAUNCHER_PREFIXES = ("PMI_", "PMIX_", "HYDRA_", "MPIR_", "OMPI_")
# What makes hydra (the mpich wheel's mpiexec) see a Slurm allocation and start its ranks with
# srun (it needs a node list and the tasks per node); and the step's own task number, which
# every process of a one-task step (a hub server, and so its kernels) carries as 0.
ALLOCATION_VARIABLES = ("SLURM_JOB_NODELIST", "SLURM_NODELIST", "SLURM_NNODES",
                        "SLURM_TASKS_PER_NODE", "SLURM_PROCID")
# hydra: start every proxy here, whatever host list it has; Open MPI (a site MPI): start more
# ranks than this node has cores when asked to (hydra always does; a check runs up to 3 ranks)
LOCAL = {"HYDRA_LAUNCHER": "fork", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
THREAD_VARIABLES = ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS")


def launched_rank(env=os.environ):
    """The rank this process has under mpiexec, or None when no launcher started it.

    ``SLURM_PROCID`` counts only in a Slurm step of more than one task (``srun -n 4 python
    ...``): a batch script, and a one-task step such as a hub server with the kernels it starts,
    carry ``SLURM_PROCID=0`` without being a rank of anything.
    """
    tasks = env.get("SLURM_STEP_NUM_TASKS", "")
    one_task = not (tasks.isdigit() and int(tasks) > 1)
    for name in RANK_VARIABLES:
        if env.get(name, "").isdigit() and not (name == "SLURM_PROCID" and one_task):
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


def local_env(env):
    """``env`` for an mpiexec that starts every rank on this node (see the module docstring).

    An outer launcher's variables go (:func:`without_launcher`), and so do the allocation's
    that would make hydra start the ranks through the scheduler (ALLOCATION_VARIABLES); hydra
    is told to start them itself (LOCAL). The job's other variables (``SLURM_JOB_ID``,
    ``SLURM_CPUS_ON_NODE``, ...) stay: the ranks still know the job they run in.
    """
    env = {k: v for k, v in without_launcher(env).items() if k not in ALLOCATION_VARIABLES}
    env.update(LOCAL)
    return env


def venv_mpiexec():
    """The mpiexec beside this Python, or None."""
    beside = Path(sys.executable).with_name("mpiexec")
    return str(beside) if beside.exists() else None


def find_mpiexec(default="mpiexec"):
    """``$DLHACK_MPIEXEC``, else the venv's mpiexec, else the first on PATH, else ``default``."""
    return (os.environ.get("DLHACK_MPIEXEC") or venv_mpiexec() or shutil.which("mpiexec")
            or default)


def mpiexec_command(n, argv, env=None, threads=1, mpiexec=None):
    """``([mpiexec, "-n", n, *argv], env)``: ``n`` ranks on this node (:func:`local_env`), with
    ``threads`` BLAS threads per rank (None: as is).

    Args:
        n: the number of ranks.
        argv: what every rank runs, e.g. ``[sys.executable, "-m", "dlhack.train"]``.
        env: the environment to start from (default: this process's).
        threads: BLAS threads per rank; None keeps ``env``'s settings.
        mpiexec: the launcher (default: :func:`find_mpiexec`).
    """
    cmd = [mpiexec or find_mpiexec(), "-n", str(n), *map(str, argv)]
    return cmd, one_thread_env(local_env(os.environ if env is None else env), threads)
