"""JupyterHub for the course on a Slurm cluster: each learner's JupyterLab is a Slurm job.

    cd /srv/dlhack-hub && DLHACK_PREFIX=/opt/dlhack \\
        /opt/dlhack/venv/bin/jupyterhub -f /opt/dlhack/course/deploy/jupyterhub_config.py

Read deploy/README.md first. The hub runs as root on a node that can submit jobs (it starts
each learner's server with ``sudo -u LEARNER sbatch``, batchspawner's way), from the course's
shared environment that ``deploy/install.sh PREFIX`` built. Learners log in with their Unix
account (PAM); those in ``DLHACK_GROUP`` are let in.

A learner's server is batchspawner's ``SlurmSpawner`` job: CPUs (and GPUs on a GPU partition)
as set below; before it starts, nbgitpuller brings the course into ``~/dlhack`` (a clone of
PREFIX/learners.git the first time, then a merge that keeps what the learner changed); then
``jupyterhub-singleuser`` runs JupyterLab with the course's settings (PREFIX/course/etc/jupyter:
the one kernel ``dlhack``, saving only inside ~/dlhack, nbgrader's instructor tools hidden).
Everything the learner starts (kernels, ``!dlhack run``, check cells and their mpiexec) runs
inside that job, on its node and its CPUs, and ends with it.

Settings, from the hub's environment (every one has a default for a small CPU room):

    DLHACK_PREFIX     where deploy/install.sh put course/, venv/, learners.git (/opt/dlhack)
    DLHACK_GROUP      the Unix group whose members may log in (dlhack)
    DLHACK_ADMINS     comma-separated hub admins (none)
    DLHACK_PARTITION  Slurm partition of the servers ("": the cluster's default)
    DLHACK_CPUS       CPUs per server (4): a check cell's ranks share them
    DLHACK_GPUS       GPUs per server (0); more asks --gres=gpu:N: set a GPU partition too
    DLHACK_MEMORY     memory per server, as sbatch's --mem ("": the partition's default)
    DLHACK_RUNTIME    time limit of a server's job (08:00:00)
    DLHACK_HUB_CONNECT_IP  the address compute nodes reach the hub's API at ("": the hub's
                      own, fine when the hub runs on a login node the compute nodes can reach)

Ports and addresses of the hub itself are JupyterHub's own options (``--JupyterHub.bind_url``,
``--JupyterHub.hub_port``, ...): the tests pass them on the command line.
"""
import os
import pwd

c = get_config()  # noqa: F821 - JupyterHub defines it when it loads this file

PREFIX = os.environ.get("DLHACK_PREFIX", "/opt/dlhack")
VENV_BIN = f"{PREFIX}/venv/bin"
COURSE = f"{PREFIX}/course"
LEARNERS_REPO = f"{PREFIX}/learners.git"
COPY = "dlhack"  # each learner's copy of the course: ~/dlhack
GROUP = os.environ.get("DLHACK_GROUP", "dlhack")
ADMINS = {n for n in os.environ.get("DLHACK_ADMINS", "").split(",") if n}
PARTITION = os.environ.get("DLHACK_PARTITION", "")
CPUS = os.environ.get("DLHACK_CPUS", "4")
GPUS = int(os.environ.get("DLHACK_GPUS", "0"))
MEMORY = os.environ.get("DLHACK_MEMORY", "")
RUNTIME = os.environ.get("DLHACK_RUNTIME", "08:00:00")
HUB_CONNECT_IP = os.environ.get("DLHACK_HUB_CONNECT_IP", "")

# -- who may log in: local Unix accounts, members of one group ------------------------------
c.JupyterHub.authenticator_class = "pam"
c.PAMAuthenticator.allowed_groups = {GROUP}
c.Authenticator.admin_users = ADMINS

# -- each learner's server: a Slurm job ------------------------------------------------------
c.JupyterHub.spawner_class = "batchspawner.SlurmSpawner"
c.SlurmSpawner.req_partition = PARTITION
c.SlurmSpawner.req_nprocs = CPUS
c.SlurmSpawner.req_gres = f"gpu:{GPUS}" if GPUS else ""
c.SlurmSpawner.req_memory = MEMORY
c.SlurmSpawner.req_runtime = RUNTIME
c.SlurmSpawner.start_timeout = 300  # a full queue keeps the learner waiting, not failing
c.SlurmSpawner.http_timeout = 120
c.SlurmSpawner.batchspawner_singleuser_cmd = f"{VENV_BIN}/batchspawner-singleuser"
c.Spawner.cmd = [f"{VENV_BIN}/jupyterhub-singleuser"]
if HUB_CONNECT_IP:
    c.JupyterHub.hub_connect_ip = HUB_CONNECT_IP

# Before the server starts: the course into ~/dlhack, merged with the learner's own changes
# (nbgitpuller: a clone the first time; later a commit of the learner's edits, then a merge of
# the new course that keeps the learner's side of every conflict). A failed update is logged
# and the server starts on the copy the learner has.
c.SlurmSpawner.req_prologue = (
    f"GIT_CONFIG_GLOBAL={PREFIX}/learners.gitconfig {VENV_BIN}/gitpuller file://{LEARNERS_REPO} main \"$HOME/{COPY}\" "
    f">\"$HOME/.dlhack-course-update.log\" 2>&1 "
    f"|| echo \"course update failed: see ~/.dlhack-course-update.log\"")

# The server runs as one job step (srun, batchspawner's way: its processes are the step's).
# dlhack's own launches (check cells, dlhack run, %%mpiexec) start their ranks on this node
# whatever the environment says (dlhack.jobs.mpiexec.local_env). A learner's bare `mpiexec` in
# a terminal would not: it would see the node list and start its ranks through srun, a new step
# that waits for the CPUs this step holds. So the variables that make the mpich wheel's mpiexec
# do that are hidden from the server, and SLURM_PROCID (the step's task 0, not a rank) with them.
c.SlurmSpawner.req_srun = ("srun env -u SLURM_JOB_NODELIST -u SLURM_NODELIST "
                           "-u SLURM_TASKS_PER_NODE -u SLURM_PROCID")


def _copy_of(spawner):
    return os.path.join(pwd.getpwnam(spawner.user.name).pw_dir, COPY)


# -- the course's JupyterLab ------------------------------------------------------------------
c.Spawner.notebook_dir = "~"
c.Spawner.default_url = f"/lab/tree/{COPY}"
c.Spawner.env_keep = ["LANG", "LC_ALL", "SLURM_CONF"]  # SLURM_CONF: a cluster not in /etc
c.Spawner.environment = {
    "PATH": f"{VENV_BIN}:/usr/local/bin:/usr/bin:/bin",
    "JUPYTER_CONFIG_PATH": f"{COURSE}/etc/jupyter",  # one kernel, nbgrader's tools hidden
    "DLHACK_WORKSPACE": _copy_of,                     # saving only inside ~/dlhack
    "OMP_NUM_THREADS": "1",
    "OPENBLAS_NUM_THREADS": "1",
}
