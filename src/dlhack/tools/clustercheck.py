"""``dlhack doctor``'s checks for a cluster: what an admin (or a learner in a hub server, itself
a Slurm job) needs to know before a room of learners runs ranks there.

    results = cluster_checks(n=2, env=os.environ, devices=["NVIDIA H100", ...])

- ``slots``: ``-n`` ranks against the cores this job was given (``jobs.allocation``), which the
  grader's pool of ranks is sized by, not against the machine's;
- ``scheduler``: the Slurm or PBS job this runs in, and the ``SLURM_*`` variables seen;
- ``launch``: inside a job, dlhack's own mpiexec (``jobs.mpiexec.mpiexec_command``: ``dlhack
  run``, ``%%mpiexec``, check cells) started ``-n`` ranks here, in this job, without a new job
  step; each rank says what it saw;
- ``kernel``: the course kernel as a Jupyter server started from this environment finds it (a
  hub's single-user server is one): there, readable by every user, its Python present, the
  course's ``bin`` first on its PATH, one BLAS thread;
- ``gpu layout``: the GPUs this process sees (``CUDA_VISIBLE_DEVICES``) against ``-n`` ranks on
  this node, each taking ``intra_rank % visible`` (``parallel.devices``);
- ``sandbox``: bubblewrap makes the grader's sandbox here (``grade.sandbox.unavailable``).

Each check is a function of the facts it judges, so tests hand it a pretend allocation or GPU
count; :func:`cluster_checks` gathers the facts. Cost: one mpiexec of ``-n`` ranks inside a job,
one fresh Python for the kernel, one bwrap run.
"""
import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from dlhack.jobs import allocation
from dlhack.jobs.mpiexec import ALLOCATION_VARIABLES, mpiexec_command
from dlhack.parallel.devices import gpu_index
from dlhack.tools.check import Result, probe

KERNEL = "dlhack"  # deploy/kernelspec.py's name


def check_slots(n, bounds, machine):
    """``n`` ranks against the cores given (``bounds``: ``allocation.bounds()``)."""
    cores = min(bounds.values()) if bounds else machine
    where = "; ".join(f"{k}={v}" for k, v in sorted(bounds.items(), key=lambda kv: kv[1]))
    detail = f"{cores} core(s) given ({where or 'os.cpu_count()'}; the machine has {machine})"
    if n > cores:
        return Result("slots", "WARN", f"-n {n} ranks on {detail}: the ranks take turns on the "
                      "cores, and timings and the grader's timeouts stretch",
                      f"ask for {n} cores (salloc -n {n}, or --cpus-per-task={n}) or run "
                      f"-n {cores}")
    return Result("slots", "OK", f"-n {n} ranks fit {detail}; the grader runs up to {cores} "
                  "ranks at once")


def check_scheduler(env):
    """The job this runs in, and what of it dlhack's launches keep."""
    if env.get("SLURM_JOB_ID"):
        seen = sorted(k for k in env if k.startswith("SLURM_"))
        dropped = [k for k in ALLOCATION_VARIABLES if k in env]
        tasks = env.get("SLURM_STEP_NUM_TASKS", "")
        if tasks.isdigit() and int(tasks) > 1 and "SLURM_PROCID" in env:
            return Result("scheduler", "WARN", f"Slurm job {env['SLURM_JOB_ID']}: this is one "
                          f"of {tasks} tasks of a step (srun -n {tasks})",
                          "run dlhack doctor once per node, not under srun -n")
        if not env.get("SLURM_CPUS_ON_NODE"):  # set in every batch script and step, not here
            return Result("scheduler", "WARN", f"Slurm job {env['SLURM_JOB_ID']}, but this is "
                          "salloc's own shell: it runs where salloc was typed, not on the "
                          f"allocation's node(s) {env.get('SLURM_JOB_NODELIST', '?')}; a bare "
                          "mpiexec goes through srun to them, dlhack's launches stay here",
                          "srun --pty bash (a shell on the node), or sbatch")
        return Result("scheduler", "OK", f"Slurm job {env['SLURM_JOB_ID']} on "
                      f"{env.get('SLURM_JOB_NODELIST', '?')}, {len(seen)} SLURM_* variables; "
                      f"dlhack's launches start their ranks on this node without "
                      f"{', '.join(dropped) or 'the node list'} (a bare mpiexec goes through "
                      "srun)")
    if env.get("PBS_JOBID"):
        return Result("scheduler", "OK", f"PBS job {env['PBS_JOBID']}; dlhack's launches start "
                      "their ranks on this node")
    return Result("scheduler", "INFO", "not inside a Slurm or PBS job")


LAUNCH_PROBE = """
import json, os, socket
from mpi4py import MPI
from dlhack.jobs import allocation
from dlhack.jobs.mpiexec import launched_rank
c = MPI.COMM_WORLD
mine = {"rank": c.rank, "size": c.size, "launched": launched_rank(), "host": socket.gethostname(),
        "job": os.environ.get("SLURM_JOB_ID") or os.environ.get("PBS_JOBID"),
        "step": os.environ.get("SLURM_STEP_ID"), "cores": allocation.cores(),
        "sum": c.allreduce(c.rank)}
everyone = c.gather(mine)
if c.rank == 0:
    print("LAUNCH " + json.dumps(everyone))
"""


def run_launch(n, env, timeout=60):
    """dlhack's own mpiexec of ``n`` ranks from ``env``: ``(replies or None, seconds, output)``."""
    cmd, env = mpiexec_command(n, [sys.executable, "-c", LAUNCH_PROBE], env=env)
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=timeout,
                              stdin=subprocess.DEVNULL, check=False)
        output = proc.stdout + proc.stderr
    except subprocess.TimeoutExpired:  # mpiexec ends its ranks when it is killed
        return None, time.monotonic() - start, f"no answer in {timeout} s"
    line = next((x for x in output.splitlines() if x.startswith("LAUNCH ")), None)
    return (json.loads(line[7:]) if line else None), time.monotonic() - start, output


def check_launch(n, env, replies, seconds, output="", host=None):
    """Inside a job: did dlhack's launch run ``n`` ranks here, in this job, in this step?"""
    job = env.get("SLURM_JOB_ID") or env.get("PBS_JOBID")
    if not job:
        return Result("launch", "INFO", "not inside a job: the round trip above is the launch")
    by_hand = f"dlhack run -n {n} on a script that prints MPI.COMM_WORLD.rank"
    if not replies:
        tail = " | ".join(output.strip().splitlines()[-3:])
        return Result("launch", "FAIL", f"dlhack's mpiexec -n {n} inside job {job} gave no "
                      f"answer ({tail or 'nothing printed'})", by_hand)
    host = host or socket.gethostname()
    wrong = [r for r in replies if r["size"] != n or r["launched"] != r["rank"]
             or r["sum"] != n * (n - 1) // 2]
    if len(replies) != n or wrong:
        return Result("launch", "FAIL", f"expected ranks 0..{n - 1} of {n}, got {replies}",
                      by_hand)
    elsewhere = {r["host"] for r in replies} - {host}
    outside = {r["job"] for r in replies} - {job}
    steps = {r["step"] for r in replies} - {env.get("SLURM_STEP_ID")}
    if elsewhere or outside or steps:
        return Result("launch", "WARN", f"ranks ran on {sorted(elsewhere) or host}, in job(s) "
                      f"{sorted(map(str, outside)) or job}, step(s) {sorted(map(str, steps))}: "
                      "not on this node inside this job's step",
                      "check HYDRA_* and I_MPI_* settings in the environment")
    return Result("launch", "OK", f"dlhack's mpiexec -n {n} ran inside job {job} on {host}, "
                  f"started here (no new job step); each rank counts {replies[0]['cores']} "
                  f"core(s); {seconds:.1f} s")


KERNEL_PROBE = f"""
import json
info = {{}}
try:
    from jupyter_client.kernelspec import KernelSpecManager
    from jupyter_core.paths import jupyter_data_dir
except ImportError as exc:
    info["error"] = f"{{type(exc).__name__}}: {{exc}}"
else:
    specs = KernelSpecManager().get_all_specs()
    info.update(kernels=sorted(specs), user_dir=jupyter_data_dir())
    if "{KERNEL}" in specs:
        info.update(dir=specs["{KERNEL}"]["resource_dir"], spec=specs["{KERNEL}"]["spec"])
print(json.dumps(info))
"""


def check_kernel(info, prefix=sys.prefix):
    """The course kernel as a Jupyter started from this environment (a hub's server) finds it."""
    fix = f"python deploy/kernelspec.py {prefix}  (deploy/install.sh does it)"
    if "kernels" not in info:
        return Result("kernel", "INFO", f"no Jupyter in this environment "
                      f"({info.get('error', '?')}): nothing serves the labs from it",
                      "pip install '.[lab]'")
    if "spec" not in info:
        return Result("kernel", "WARN", f"no {KERNEL!r} kernel among {info['kernels']}: a "
                      "Jupyter started from this environment does not offer it", fix)
    spec, where = info["spec"], Path(info["dir"])
    python, env = Path(spec["argv"][0]), spec.get("env", {})
    if not os.access(python, os.X_OK):
        return Result("kernel", "FAIL", f"{where}: its Python {python} cannot run", fix)
    bindir = env.get("PATH", "").split(":")[0]
    problems = []
    if where.is_relative_to(info["user_dir"]):
        problems.append(f"it is in {info['user_dir']}, which only this user sees")
    if not (Path(bindir) / "dlhack").exists():
        problems.append(f"its PATH does not start with the course's bin ({bindir or 'unset'}): "
                        "!dlhack run in a cell finds another or none")
    if env.get("OMP_NUM_THREADS") != "1":
        problems.append("it sets no OMP_NUM_THREADS=1: N ranks start N x cores BLAS threads")
    if problems:
        return Result("kernel", "WARN", f"{KERNEL!r} at {where}: " + "; ".join(problems), fix)
    return Result("kernel", "OK", f"{KERNEL!r} at {where}: {python}, PATH starts with "
                  f"{bindir}, one BLAS thread")


def check_gpu_layout(n, visible, env):
    """``n`` ranks on this node, each taking ``intra_rank % visible`` of the GPUs seen here."""
    shown = env.get("CUDA_VISIBLE_DEVICES")
    seen = f"{visible} GPU(s) seen (CUDA_VISIBLE_DEVICES={shown if shown is not None else 'unset'})"
    if not visible:
        return Result("gpu layout", "INFO", f"{seen}: ranks run on the CPU")
    taken = [gpu_index(k, visible) for k in range(n)]
    if n <= visible:
        return Result("gpu layout", "OK", f"{seen}; -n {n}: rank k takes GPU k, one each")
    shared = [k for k in range(n) if taken.count(taken[k]) > 1]
    return Result("gpu layout", "WARN", f"{seen}; -n {n} ranks started from here would take "
                  f"GPUs {taken}: ranks {shared} share, and dlhack train --gpu stops",
                  f"ask for {n} GPUs per node (--gpus-per-node={n}), or run -n {visible}; "
                  "under srun --gpus-per-task each rank sees its own GPU, and that is fine")


# The grader's own test of bwrap, asked of a fresh Python as a check cell would (the grader is a
# room above tools: its modules are run, not imported, here).
SANDBOX_PROBE = """
import json
from dlhack.grade.sandbox import unavailable
print(json.dumps({"reason": unavailable()}))
"""


def check_sandbox(reason):
    """The grader runs learners' work only inside bubblewrap (``grade.sandbox.unavailable``)."""
    if reason:
        return Result("sandbox", "FAIL", f"check cells cannot grade here: {reason}",
                      "sudo deploy/system-packages.sh  (installs bubblewrap)")
    return Result("sandbox", "OK", "bubblewrap makes the grader's sandbox")


def cluster_checks(n, env, devices=None, timeout=60):
    """Gather the facts and run every check above; ``devices``: the GPU names CuPy sees."""
    job = env.get("SLURM_JOB_ID") or env.get("PBS_JOBID")
    launch = run_launch(n, env, timeout) if job else (None, 0.0, "")
    sandbox = probe(SANDBOX_PROBE, env)
    return [
        check_slots(n, allocation.bounds(env), os.cpu_count() or 1),
        check_scheduler(env),
        check_launch(n, env, *launch),
        check_kernel(probe(KERNEL_PROBE, env)),
        check_gpu_layout(n, len(devices or []), env),
        check_sandbox(sandbox.get("reason", sandbox.get("error"))),
    ]
