"""Rank slots and dlhack's launches inside real allocations of the private Slurm
(dlhack.jobs.allocation, dlhack.jobs.mpiexec, ``dlhack doctor``'s cluster checks); the same
functions with pretend environments: tests/jobs/test_allocation.py, tests/jobs/test_mpiexec.py,
tests/tools/test_clustercheck.py.

The node declares 8 CPUs, more than this machine has, and nothing binds tasks
(``TaskPlugin=task/none``): a job given 1 core still has every core of the machine in its
affinity, and only ``SLURM_CPUS_ON_NODE`` says what it was given, as on a shared 64-core node
of a site without task binding.

- ``salloc -c C srun -c C``: C slots, whatever the machine has; and ``salloc``'s own command,
  which runs where salloc was typed, outside the allocation (no ``SLURM_CPUS_ON_NODE``), is not
  taken for a place inside it;
- a learner's server is a one-task step (``srun -n 1``, as batchspawner starts it): ``dlhack run
  -n 2`` from inside it starts two ranks here, in that step, that see each other, each knowing
  its rank from hydra and not from the step's ``SLURM_PROCID=0``;
- ``dlhack doctor`` in a batch job of 1 core reports the job, the launch, the kernel and the
  slots (2 ranks on 1 core: a warning), and no failure; in salloc's own shell it says that this
  is not the allocation's node.

Needs root and slurm-wlm + munge (``make test`` installs them); skipped otherwise, except in CI.
"""
import json

import pytest

SLOTS = """
import json, os
from dlhack.jobs import allocation
print(json.dumps({"bounds": allocation.bounds(), "cores": allocation.cores(),
                  "job": os.environ.get("SLURM_JOB_ID")}))
"""

RANK = """
import json, os, socket
from mpi4py import MPI
from dlhack.jobs import allocation
from dlhack.jobs.mpiexec import launched_rank
c = MPI.COMM_WORLD
slurm = {k: v for k, v in os.environ.items() if k.startswith("SLURM_")}
mine = {"rank": c.rank, "size": c.size, "launched": launched_rank(), "sum": c.allreduce(c.rank),
        "host": socket.gethostname(), "cores": allocation.cores(), "slurm": slurm}
everyone = c.gather(mine)
if c.rank == 0:
    print("RANKS " + json.dumps(everyone))
"""


def last_json(text, prefix=""):
    line = [x for x in text.splitlines() if x.startswith(prefix)][-1]
    return json.loads(line[len(prefix):])


@pytest.mark.parametrize("cores", [1, 2])
def test_slots_are_the_cores_given(one_node, learner, site, work, cores):
    python = site / "venv" / "bin" / "python"
    result = one_node.run(["salloc", "-c", str(cores), "srun", "-c", str(cores), str(python),
                           "-c", SLOTS], user=learner, cwd=work, timeout=120)
    seen = last_json(result.stdout)
    assert seen["job"], result.stderr
    assert seen["bounds"]["SLURM_CPUS_ON_NODE"] == cores, seen
    assert seen["cores"] == cores, seen
    if seen["bounds"]["affinity"] > cores:  # the machine has more: the allocation narrows it
        assert seen["bounds"]["affinity"] > seen["cores"]


def test_dlhack_run_inside_a_learners_server_step(one_node, learner, site, work):
    """``salloc -c 2 srun -n 1 -c 2``: the shape of a hub server's job; from inside its step,
    ``dlhack run -n 2`` (what ``%%mpiexec`` and a check cell do)."""
    venv = site / "venv" / "bin"
    (work / "ranks.py").write_text(RANK)
    step = ["srun", "-n", "1", "-c", "2", "bash", "-c",
            'echo "STEP $SLURM_JOB_ID.$SLURM_STEP_ID $(hostname)"; exec "$@"', "step",
            str(venv / "dlhack"), "run", "-n", "2", "--no-prefix", "-t", "90", "--",
            str(venv / "python"), "ranks.py"]
    result = one_node.run(["salloc", "-c", "2", *step], user=learner, cwd=work, timeout=180)
    out = result.stdout + result.stderr
    assert result.returncode == 0, out
    job_step, host = [x for x in out.splitlines() if x.startswith("STEP ")][-1].split()[1:]
    job, step_id = job_step.split(".")
    ranks = last_json(result.stdout, "RANKS ")
    assert [(r["rank"], r["size"], r["launched"], r["sum"]) for r in ranks] == [
        (0, 2, 0, 1), (1, 2, 1, 1)], out  # they see each other; rank 1 is not SLURM_PROCID 0
    for r in ranks:
        assert r["host"] == host and r["cores"] == 2, r
        assert r["slurm"]["SLURM_JOB_ID"] == job and r["slurm"]["SLURM_STEP_ID"] == step_id, r
        # what would make hydra or a library think it is a rank of srun, or start srun itself
        assert not {"SLURM_PROCID", "SLURM_NODELIST", "SLURM_JOB_NODELIST"} & set(r["slurm"]), r
    # salloc has returned: the job ends (it may show COMPLETING for a moment) and nothing is left
    assert one_node.wait_job(job, timeout=30)["JobState"] == "COMPLETED"
    assert one_node.squeue(user=learner) == []


def test_salloc_shell_is_not_inside_the_allocation(one_node, learner, site, work):
    """salloc's command runs on the submit host (here the same machine, as on a login node)."""
    python = site / "venv" / "bin" / "python"
    code = ("import json, os; from dlhack.tools.clustercheck import check_scheduler; "
            "print(json.dumps(check_scheduler(dict(os.environ)).__dict__))")
    result = one_node.run(["salloc", "-c", "1", str(python), "-c", code], user=learner,
                          cwd=work, timeout=120)
    seen = last_json(result.stdout)
    assert seen["status"] == "WARN" and "salloc's own shell" in seen["detail"], seen


def test_doctor_inside_a_batch_job(one_node, learner, site, work):
    venv = site / "venv" / "bin"
    report = work / "doctor.json"
    job = one_node.sbatch("-c", "1", "-o", work / "doctor-%j.txt", "--wrap",
                          f"{venv / 'dlhack'} doctor -n 2 --json {report}", user=learner,
                          cwd=work)
    info = one_node.wait_job(job, timeout=300)
    out = (work / f"doctor-{job}.txt").read_text()
    assert info["JobState"] == "COMPLETED", out  # exit status 0: no FAIL
    checks = {r["name"]: r for r in json.loads(report.read_text())}
    assert checks["scheduler"]["status"] == "OK", out
    assert checks["scheduler"]["detail"].startswith("Slurm job "), out
    assert checks["launch"]["status"] == "OK", out
    assert "no new job step" in checks["launch"]["detail"], out
    assert checks["slots"]["status"] == "WARN", out  # -n 2 on the 1 core given
    assert "SLURM_CPUS_ON_NODE=1" in checks["slots"]["detail"], out
    assert checks["kernel"]["status"] == "OK", out
    assert str(site / "venv" / "bin") in checks["kernel"]["detail"], out
    assert checks["roundtrip"]["status"] == "OK", out  # a bare mpiexec, through srun
    assert checks["sandbox"]["status"] == "OK", out
