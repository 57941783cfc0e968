"""How many cores this process was given (dlhack.jobs.allocation), from simulated allocations:
Slurm's and PBS's variables, a PBS node file, and a real affinity mask set in a fresh process;
and the pools sized by it (the grader's Slots). Under the private Slurm: tests/cluster/
test_allocation_slurm.py."""
import json
import os
import subprocess
import sys

import pytest

from dlhack.grade import schedule
from dlhack.jobs import allocation
from dlhack.jobs.allocation import bounds, cores, describe

SLURM = {"SLURM_JOB_ID": "17", "SLURM_CPUS_ON_NODE": "2"}


def test_slurm_cpus_on_a_big_node():
    """`sbatch -c 2` on a 64-core node where nothing binds (TaskPlugin=task/none)."""
    assert cores(SLURM, cpus=64) == 2
    assert bounds(SLURM, cpus=64) == {"affinity": 64, "SLURM_CPUS_ON_NODE": 2}
    assert describe(SLURM, cpus=64) == "2 (SLURM_CPUS_ON_NODE=2; affinity=64)"


def test_the_smallest_bound_wins():
    assert cores(SLURM, cpus=1) == 1  # bound to one CPU inside a 2-CPU job
    assert cores({"SLURM_JOB_ID": "17", "SLURM_CPUS_ON_NODE": "16"}, cpus=4) == 4


def test_scheduler_variables_count_only_inside_its_job():
    assert cores({"SLURM_CPUS_ON_NODE": "2"}, cpus=8) == 8  # left over, not in a job
    assert cores({"NCPUS": "2"}, cpus=8) == 8
    assert cores({"SLURM_JOB_ID": "17", "SLURM_CPUS_ON_NODE": "x"}, cpus=8) == 8  # unreadable


def test_pbs_ncpus_then_the_node_file(tmp_path):
    assert cores({"PBS_JOBID": "5.pbs", "NCPUS": "3"}, cpus=64) == 3
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("node1.cluster\nnode1.cluster\nnode2.cluster\nnode1.cluster\n")
    env = {"PBS_JOBID": "5.pbs", "PBS_NODEFILE": str(nodefile)}
    assert cores(env, cpus=64, host="node1") == 3
    assert cores(env, cpus=64, host="node2.cluster") == 1
    assert bounds(env, cpus=64, host="node9") == {"affinity": 64}  # not in the file: no bound
    assert cores({"PBS_JOBID": "5.pbs", "PBS_NODEFILE": str(tmp_path / "gone")}, cpus=64) == 64


def test_an_affinity_mask_set_in_a_fresh_process():
    """``taskset``'s way: the mask alone narrows the cores, whatever os.cpu_count() says."""
    mine = sorted(os.sched_getaffinity(0))
    code = ("import json, os, sys\n"
            "os.sched_setaffinity(0, {int(sys.argv[1])})\n"
            "from dlhack.jobs.allocation import bounds, cores\n"
            "print(json.dumps([cores(), bounds(), os.cpu_count()]))")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("SLURM_", "PBS_"))}
    out = subprocess.run([sys.executable, "-c", code, str(mine[-1])], env=env, check=True,
                         capture_output=True, text=True, timeout=60).stdout
    got, found, machine = json.loads(out)
    assert got == 1 and found == {"affinity": 1}
    assert cores(env) == len(mine) <= machine


@pytest.mark.parametrize(("given", "capacity"), [(1, 4), (2, 4), (12, 12)])
def test_the_graders_slots_are_the_cores_given(monkeypatch, given, capacity):
    """At least 4 (a lab's biggest test), else what the job was given, never the machine's."""
    monkeypatch.setattr(allocation, "cores", lambda: given)
    monkeypatch.setattr(os, "cpu_count", lambda: 64)
    assert schedule.Slots().capacity == capacity
    assert schedule.Slots(3).capacity == 3  # --slots says so
