"""``dlhack doctor``'s cluster checks (dlhack.tools.clustercheck), each handed a pretend
allocation, job, kernel or GPU count. The same checks inside a real ``salloc`` of the private
Slurm: tests/cluster/test_allocation_slurm.py."""
import json
import stat
import sys

from dlhack.tools.clustercheck import (
    check_gpu_layout,
    check_kernel,
    check_launch,
    check_sandbox,
    check_scheduler,
    check_slots,
    run_launch,
)

JOB = {"SLURM_JOB_ID": "7", "SLURM_JOB_NODELIST": "n1", "SLURM_CPUS_ON_NODE": "2",
       "SLURM_STEP_ID": "0", "SLURM_PROCID": "0", "SLURM_STEP_NUM_TASKS": "1"}


def test_slots_are_the_cores_given_not_the_machines():
    """2 cores allotted on a 64-core node: -n 4 oversubscribes, whatever the machine has."""
    given = {"affinity": 64, "SLURM_CPUS_ON_NODE": 2}
    crowded = check_slots(4, given, machine=64)
    assert crowded.status == "WARN" and "2 core(s) given (SLURM_CPUS_ON_NODE=2" in crowded.detail
    assert "run -n 2" in crowded.fix
    fits = check_slots(2, given, machine=64)
    assert fits.status == "OK" and "the grader runs up to 2 ranks" in fits.detail
    assert check_slots(3, {}, machine=4).status == "OK"  # nothing narrower: the machine


def test_the_job_and_its_variables_are_reported():
    inside = check_scheduler(JOB)
    assert inside.status == "OK" and inside.detail.startswith("Slurm job 7 on n1, 6 SLURM_*")
    assert "without SLURM_JOB_NODELIST, SLURM_PROCID" in inside.detail
    shell = check_scheduler({k: v for k, v in JOB.items() if k != "SLURM_CPUS_ON_NODE"})
    assert shell.status == "WARN" and "salloc's own shell" in shell.detail
    assert "srun --pty bash" in shell.fix
    rank = check_scheduler(dict(JOB, SLURM_STEP_NUM_TASKS="4", SLURM_PROCID="3"))
    assert rank.status == "WARN" and "one of 4 tasks" in rank.detail
    assert check_scheduler({"PBS_JOBID": "9.pbs"}).detail.startswith("PBS job 9.pbs")
    assert check_scheduler({}).status == "INFO"


def reply(rank, n=2, **changes):
    return dict({"rank": rank, "size": n, "launched": rank, "host": "n1", "job": "7",
                 "step": "0", "cores": 2, "sum": n * (n - 1) // 2}, **changes)


def test_the_launch_inside_a_job_runs_here_in_this_step():
    good = check_launch(2, JOB, [reply(0), reply(1)], 0.5, host="n1")
    assert good.status == "OK" and "inside job 7 on n1" in good.detail
    assert "2 core(s)" in good.detail
    srun = check_launch(2, JOB, [reply(0, step="1"), reply(1, step="1")], 0.5, host="n1")
    assert srun.status == "WARN" and "step(s) ['1']" in srun.detail
    away = check_launch(2, JOB, [reply(0), reply(1, host="n2")], 0.5, host="n1")
    assert away.status == "WARN" and "['n2']" in away.detail


def test_a_launch_whose_ranks_do_not_see_each_other_fails():
    alone = [reply(0, n=1, sum=0), reply(0, n=1, sum=0)]  # two singletons: another MPI's rank
    assert check_launch(2, JOB, alone, 0.5, host="n1").status == "FAIL"
    assert check_launch(2, JOB, [reply(0)], 0.5, host="n1").status == "FAIL"  # one missing
    silent = check_launch(2, JOB, None, 60, "no answer in 60 s")
    assert silent.status == "FAIL" and "no answer in 60 s" in silent.detail
    assert check_launch(2, {}, None, 0).status == "INFO"  # outside a job: nothing to check


def test_the_launch_probe_runs_under_dlhacks_mpiexec():
    """Outside a job here; the ranks still say who they are (inside one: the Slurm test)."""
    replies, seconds, output = run_launch(2, {**JOB, "PATH": "/usr/bin:/bin"}, timeout=120)
    assert [r["rank"] for r in replies or []] == [0, 1], output
    assert {r["job"] for r in replies} == {"7"}  # the job's identity reaches the ranks
    assert {r["launched"] for r in replies} == {0, 1}  # not SLURM_PROCID=0 on both
    assert check_launch(2, JOB, replies, seconds, host=replies[0]["host"]).status == "OK"


def kernel_info(tmp_path, argv0=None, env=None, user=False):
    """What KERNEL_PROBE reports for a kernel written under tmp_path."""
    bindir = tmp_path / "venv" / "bin"
    bindir.mkdir(parents=True, exist_ok=True)
    (bindir / "dlhack").touch()
    python = bindir / "python"
    python.touch()
    python.chmod(python.stat().st_mode | stat.S_IXUSR)
    env = {"PATH": f"{bindir}:${{PATH}}", "OMP_NUM_THREADS": "1"} if env is None else env
    home = tmp_path / "home" / ".local" / "share" / "jupyter"
    where = (home if user else tmp_path / "venv" / "share" / "jupyter") / "kernels" / "dlhack"
    spec = {"argv": [str(argv0 or python), "-m", "ipykernel_launcher"], "env": env}
    return {"kernels": ["dlhack", "python3"], "user_dir": str(home), "dir": str(where),
            "spec": spec}


def test_the_course_kernel_as_the_hubs_jupyter_sees_it(tmp_path):
    assert check_kernel(kernel_info(tmp_path)).status == "OK"
    mine = check_kernel(kernel_info(tmp_path, user=True))
    assert mine.status == "WARN" and "only this user sees" in mine.detail
    bare = check_kernel(kernel_info(tmp_path, env={}))
    assert bare.status == "WARN" and "!dlhack run" in bare.detail and "OMP_NUM" in bare.detail
    gone = check_kernel(kernel_info(tmp_path, argv0=tmp_path / "old" / "python"))
    assert gone.status == "FAIL"
    missing = check_kernel({"kernels": ["python3"], "user_dir": "/h"}, prefix="/opt/dlhack/venv")
    assert missing.status == "WARN" and "kernelspec.py /opt/dlhack/venv" in missing.fix
    assert check_kernel({"error": "ModuleNotFoundError"}).status == "INFO"


def test_this_environments_kernel_is_found(tmp_path):
    """make venv writes the kernel (deploy/kernelspec.py): the probe finds it, in a fresh
    Python."""
    from dlhack.tools.check import probe
    from dlhack.tools.clustercheck import KERNEL_PROBE

    info = probe(KERNEL_PROBE, {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path)})
    result = check_kernel(info)
    assert result.status == "OK", (result, json.dumps(info))
    assert sys.prefix in result.detail


def test_each_rank_needs_a_gpu_of_its_own():
    """Fake GPU counts: intra_rank % visible, against the ranks started here."""
    one = check_gpu_layout(2, 1, {"CUDA_VISIBLE_DEVICES": "3"})
    assert one.status == "WARN" and "CUDA_VISIBLE_DEVICES=3" in one.detail
    assert "GPUs [0, 0]: ranks [0, 1] share" in one.detail and "--gpus-per-task" in one.fix
    three = check_gpu_layout(3, 2, {})
    assert three.status == "WARN" and "ranks [0, 2] share" in three.detail
    assert check_gpu_layout(4, 4, {}).status == "OK"
    assert check_gpu_layout(2, 8, {}).status == "OK"
    assert check_gpu_layout(2, 0, {"CUDA_VISIBLE_DEVICES": ""}).status == "INFO"


def test_no_sandbox_no_grading():
    assert check_sandbox(None).status == "OK"
    missing = check_sandbox("bubblewrap (bwrap) is not installed")
    assert missing.status == "FAIL" and "system-packages.sh" in missing.fix
