"""Which mpiexec, and the one way a job's command line is built (dlhack.jobs.mpiexec): one BLAS
thread per rank unless told to keep the learner's setting, an outer launcher's variables
dropped, the ranks started on this node whatever allocation the environment describes, and the
rank read from whichever launcher started this process. Under the private Slurm:
tests/cluster/test_allocation_slurm.py."""
import sys
from pathlib import Path

from dlhack.jobs.mpiexec import (
    LOCAL,
    THREAD_VARIABLES,
    find_mpiexec,
    launched_rank,
    local_env,
    mpiexec_command,
    one_thread_env,
    without_launcher,
)


def test_the_rank_comes_from_whichever_launcher_set_it():
    assert launched_rank({}) is None
    assert launched_rank({"PMI_RANK": "3"}) == 3
    assert launched_rank({"OMPI_COMM_WORLD_RANK": "1"}) == 1
    assert launched_rank({"SLURM_PROCID": "2", "SLURM_STEP_NUM_TASKS": "4"}) == 2  # srun -n 4
    assert launched_rank({"PMI_RANK": ""}) is None


def test_a_one_task_step_is_not_an_mpi_job():
    """A hub server is `srun jupyterhub-singleuser`: it, and every kernel it starts, carries
    SLURM_PROCID=0; so does a batch script. Neither is rank 0 of anything."""
    assert launched_rank({"SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "1"}) is None
    assert launched_rank({"SLURM_PROCID": "0", "SLURM_NTASKS": "4"}) is None  # the batch script
    assert launched_rank({"SLURM_PROCID": "0", "PMI_RANK": "1"}) == 1  # a rank of our mpiexec


def test_one_thread_per_rank_unless_the_setting_is_kept():
    env = {"OMP_NUM_THREADS": "8", "HOME": "/h"}
    assert {one_thread_env(env)[name] for name in THREAD_VARIABLES} == {"1"}
    assert one_thread_env(env, threads=None) == env  # dlhack run: the learner's as it is
    assert one_thread_env(env, threads=2, EXTRA="x")["EXTRA"] == "x"
    assert env == {"OMP_NUM_THREADS": "8", "HOME": "/h"}  # a copy: the original is untouched


def test_an_outer_launchers_variables_are_dropped():
    env = {"PMI_RANK": "0", "HYDRA_PROXY": "x", "OMPI_X": "1", "PMIX_RANK": "0", "PATH": "/bin"}
    assert without_launcher(env) == {"PATH": "/bin"}


def test_dlhacks_launches_start_their_ranks_here_inside_an_allocation():
    """A learner's server job (Slurm step of a 2-node job, say): hydra would see the node list
    and start its ranks with srun; the launch keeps the job's identity, not its node list."""
    server = {"SLURM_JOB_ID": "42", "SLURM_JOB_NODELIST": "n[1-2]", "SLURM_NODELIST": "n[1-2]",
              "SLURM_NNODES": "2", "SLURM_TASKS_PER_NODE": "2(x2)", "SLURM_PROCID": "0",
              "SLURM_CPUS_ON_NODE": "2", "PMI_RANK": "0", "HYDRA_LAUNCHER": "slurm",
              "PATH": "/bin"}
    env = local_env(server)
    assert env == {"SLURM_JOB_ID": "42", "SLURM_CPUS_ON_NODE": "2", "PATH": "/bin", **LOCAL}
    assert LOCAL == {"HYDRA_LAUNCHER": "fork", "OMPI_MCA_rmaps_base_oversubscribe": "1"}
    _, started = mpiexec_command(2, ["python", "x.py"], env=server)
    assert {k: v for k, v in started.items() if k not in THREAD_VARIABLES} == env
    assert local_env(env) == env


def test_the_environments_mpiexec_unless_one_is_named(monkeypatch):
    monkeypatch.delenv("DLHACK_MPIEXEC", raising=False)
    beside = Path(sys.executable).with_name("mpiexec")
    assert find_mpiexec() == str(beside)  # the mpich wheel's, beside this Python
    monkeypatch.setenv("DLHACK_MPIEXEC", "/opt/mpi/bin/mpiexec")
    assert find_mpiexec() == "/opt/mpi/bin/mpiexec"


def test_the_command_line():
    cmd, env = mpiexec_command(3, [sys.executable, "-m", "dlhack.train"], env={"A": "1"},
                               mpiexec="/x/mpiexec")
    assert cmd == ["/x/mpiexec", "-n", "3", sys.executable, "-m", "dlhack.train"]
    assert env["OPENBLAS_NUM_THREADS"] == "1" and env["A"] == "1"
