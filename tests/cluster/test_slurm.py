"""The private Slurm itself, and MPI inside an allocation (tests/cluster/slurm.py).

- one node: a learner's job runs as the learner; ``salloc -n 2`` then the mpich wheel's
  ``mpiexec -n 2`` runs two mpi4py ranks that see each other, and hydra starts its proxy as a
  Slurm job step (srun), which is what a learner's mpiexec does inside a hub server's job;
- two nodes (network namespaces): ``sbatch -N 2`` with 4 ranks, two per node, node-aware;
- stopping the cluster leaves no job and no process (asserted by the fixtures' teardown).

Needs root and slurm-wlm + munge (``make test`` installs them); skipped otherwise, except in CI.
"""

RANKS_SCRIPT = '''
import os
from mpi4py import MPI
comm = MPI.COMM_WORLD
names = comm.gather((MPI.Get_processor_name(), os.environ.get("SLURM_STEP_ID")), root=0)
total = comm.allreduce(comm.rank)
if comm.rank == 0:
    print("size", comm.size, "sum", total)
    for rank, (host, step) in enumerate(names):
        print("rank", rank, "host", host, "step", step)
'''


def ranks_script(folder):
    script = folder / "ranks.py"
    script.write_text(RANKS_SCRIPT)
    return script


def test_a_job_runs_as_the_learner(one_node, learner, work):
    job = one_node.sbatch("--wrap", "id -un; echo $SLURM_CPUS_ON_NODE", "-c", "2",
                          "-o", work / "out-%j.txt", user=learner, cwd=work)
    info = one_node.wait_job(job)
    assert info["JobState"] == "COMPLETED", info
    assert (work / f"out-{job}.txt").read_text().split() == [learner, "2"]


def test_salloc_then_mpiexec_runs_ranks_as_job_steps(one_node, learner, site, work):
    """The wheel's hydra sees the allocation and starts its proxy with srun: a job step."""
    venv = site / "venv" / "bin"
    result = one_node.run(["salloc", "-n", "2", str(venv / "mpiexec"), "-n", "2",
                           str(venv / "python"), str(ranks_script(work))],
                          user=learner, cwd=work, timeout=120)
    lines = result.stdout.splitlines()
    assert "size 2 sum 1" in lines, result.stdout + result.stderr
    steps = {line.split()[-1] for line in lines if line.startswith("rank ")}
    assert len(steps) == 1 and steps != {"None"}, lines  # both ranks under one srun step


def test_two_nodes_run_four_ranks(two_nodes, learner, site, work):
    venv = site / "venv" / "bin"
    job = two_nodes.sbatch("-N", "2", "--ntasks-per-node=2", "-o", work / "out-%j.txt",
                           "--wrap", f"{venv / 'mpiexec'} -n 4 {venv / 'python'} "
                           f"{ranks_script(work)}", user=learner, cwd=work)
    info = two_nodes.wait_job(job, timeout=180)
    out = (work / f"out-{job}.txt").read_text()
    assert info["JobState"] == "COMPLETED", out
    assert "size 4 sum 6" in out, out
    hosts = [line.split()[3] for line in out.splitlines() if line.startswith("rank ")]
    assert hosts == [two_nodes.names[0]] * 2 + [two_nodes.names[1]] * 2, out
