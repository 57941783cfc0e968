"""How many cores this process was given: the rank slots of every pool of ranks dlhack starts.

    cores()          # 2 inside `sbatch -c 2` on a 64-core node, where os.cpu_count() says 64
    bounds()         # {"affinity": 64, "SLURM_CPUS_ON_NODE": 2}: every limit found, for reports

``os.cpu_count()`` counts the machine's cores, not the job's: on a shared node it sizes a pool
of ranks for cores that other jobs own. Each source below is an upper bound on what this
process may use, and the smallest one wins:

- ``affinity``: the CPUs this process may be scheduled on (``os.sched_getaffinity``), which
  ``taskset``, a cpuset, and a scheduler that binds tasks (Slurm's task/affinity or
  task/cgroup, PBS's cpusets) narrow down;
- ``SLURM_CPUS_ON_NODE``: the CPUs of this node that Slurm gave the job, set in the job and in
  every step (with ``TaskPlugin=task/none`` nothing binds, so the affinity cannot tell);
- ``NCPUS``: PBS Pro's cores of this node's chunk; without it, the lines of ``$PBS_NODEFILE``
  that name this host (PBS and Torque write one per process slot).

The scheduler variables count only inside a job of that scheduler (``SLURM_JOB_ID``,
``PBS_JOBID``). Cost: a system call and, under PBS, one read of the node file. Standard library
only.
"""
import os
import socket


def affinity():
    """The CPUs this process may run on, or None where the system cannot tell."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        return None


def _count(text):
    return int(text) if text and text.strip().isdigit() and int(text) > 0 else None


def _pbs_node_slots(path, host):
    """Lines of the PBS node file that name ``host`` (short names compared), or None."""
    try:
        with open(path) as f:
            names = [line.strip().split(".")[0] for line in f if line.strip()]
    except OSError:
        return None
    return names.count(host.split(".")[0]) or None


def bounds(env=None, cpus=None, host=None):
    """Every limit on this process's cores that can be found, ``{source: cores}``.

    Args:
        env: the environment to read (default: this process's).
        cpus: the affinity's size (default: :func:`affinity`); tests pass one.
        host: this node's name, for the PBS node file (default: ``socket.gethostname()``).
    """
    env = os.environ if env is None else env
    found = {"affinity": affinity() if cpus is None else cpus}
    if env.get("SLURM_JOB_ID"):
        found["SLURM_CPUS_ON_NODE"] = _count(env.get("SLURM_CPUS_ON_NODE"))
    if env.get("PBS_JOBID"):
        found["NCPUS"] = _count(env.get("NCPUS"))
        if found["NCPUS"] is None and env.get("PBS_NODEFILE"):
            found["PBS_NODEFILE"] = _pbs_node_slots(env["PBS_NODEFILE"],
                                                    host or socket.gethostname())
    return {source: n for source, n in found.items() if n}


def cores(env=None, cpus=None, host=None):
    """The cores this process was given: the smallest of :func:`bounds` (at least 1).

    Without any bound (no affinity on this system, no scheduler) ``os.cpu_count()``.
    """
    found = bounds(env, cpus, host)
    return max(1, min(found.values())) if found else (os.cpu_count() or 1)


def describe(env=None, cpus=None, host=None):
    """``"2 (SLURM_CPUS_ON_NODE=2; affinity=64)"``: the count and where it came from."""
    found = bounds(env, cpus, host)
    if not found:
        return f"{cores(env, cpus, host)} (os.cpu_count(): nothing narrower found)"
    ranked = sorted(found.items(), key=lambda item: item[1])
    return f"{ranked[0][1]} (" + "; ".join(f"{k}={v}" for k, v in ranked) + ")"
