"""Which mpiexec, and the one way a job's command line is built (dlhack.jobs.mpiexec): one BLAS
thread per rank unless told to keep the learner's setting, an outer launcher's variables
dropped, and the rank read from whichever launcher started this process."""
import sys
from pathlib import Path

from dlhack.jobs.mpiexec import (
    THREAD_VARIABLES,
    find_mpiexec,
    launched_rank,
    mpiexec_command,
    one_thread_env,
    without_launcher,
)


def test_the_rank_comes_from_whichever_launcher_set_it():
    assert launched_rank({}) is None
    assert launched_rank({"PMI_RANK": "3"}) == 3
    assert launched_rank({"OMPI_COMM_WORLD_RANK": "1"}) == 1
    assert launched_rank({"SLURM_PROCID": "2"}) == 2
    assert launched_rank({"PMI_RANK": ""}) is None


def test_one_thread_per_rank_unless_the_setting_is_kept():
    env = {"OMP_NUM_THREADS": "8", "HOME": "/h"}
    assert {one_thread_env(env)[name] for name in THREAD_VARIABLES} == {"1"}
    assert one_thread_env(env, threads=None) == env  # dlhack run: the learner's as it is
    assert one_thread_env(env, threads=2, EXTRA="x")["EXTRA"] == "x"
    assert env == {"OMP_NUM_THREADS": "8", "HOME": "/h"}  # a copy: the original is untouched


def test_an_outer_launchers_variables_are_dropped():
    env = {"PMI_RANK": "0", "HYDRA_PROXY": "x", "OMPI_X": "1", "PMIX_RANK": "0", "PATH": "/bin"}
    assert without_launcher(env) == {"PATH": "/bin"}


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
