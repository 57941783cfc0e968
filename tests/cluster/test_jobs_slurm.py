"""The scripts in jobs/, submitted with ``sbatch`` to the private Slurm, as a learner would.

Each runs from the shared course environment (deploy/install.sh, as the admin prepares it),
with its GPU steps replaced by CPU ones (``DLHACK_DEVICE=cpu``, which each script documents):

- ``train_slurm.sh`` on two nodes, 4 ranks; scancel'ed once it wrote a snapshot, submitted
  again, and resumed from that snapshot (``--resume auto``);
- ``gpu_check.sh`` submitted from the course's folder: it finds the course through
  ``$SLURM_SUBMIT_DIR`` (Slurm runs a spool copy of the script) and installs nothing;
- ``grade_class.sh``: a right and a wrong submission of lab 02, graded in the sandbox;
- ``jupyter_compute_node.sh``: the token never on a command line, the URL in a file only the
  learner reads, the server refusing requests without the token, scancel stopping it all.

``train_pbs.sh`` cannot run here (no PBS): jobs/README.md says so.
"""
import csv
import json
import re
import time
import urllib.error
import urllib.request
from pathlib import Path

from tests.support import ROOT

JOBS = ROOT / "jobs"
TINY = ("--eval-every 0 --n-eval 8 --units 16 --layers 1 --n-train 400 --dropout 0 "
        "--snapshot-every 5")


def job_output(folder, name, job):
    path = folder / f"{name}-{job}.out"
    return path.read_text() if path.exists() else f"(no {path.name})"


def test_train_slurm_on_two_nodes_resumes_after_scancel(two_nodes, learner, site, work):
    env = {"DLHACK_DEVICE": "cpu", "DLHACK_HOME": str(site / "course"),
           "DLHACK_VENV": str(site / "venv"), "DLHACK_OUT": "run"}
    submit = ("--cpus-per-task=1", "--export=ALL", JOBS / "train_slurm.sh")
    first = two_nodes.sbatch(*submit, user=learner, cwd=work,
                             env=dict(env, DLHACK_ARGS=f"--iterations 100000 {TINY}"))
    deadline = time.monotonic() + 240
    while not list((work / "run").glob("snapshot_iter_*")):
        assert time.monotonic() < deadline, job_output(work, "dlhack-train", first)
        assert two_nodes.job(first).get("JobState") in ("PENDING", "RUNNING"), \
            job_output(work, "dlhack-train", first)
        time.sleep(1)
    two_nodes.run(["scancel", first], user=learner)
    assert two_nodes.wait_job(first)["JobState"] == "CANCELLED"

    snapshots = sorted((work / "run").glob("snapshot_iter_*"))
    newest = int(re.search(r"(\d+)", snapshots[-1].name).group(1))
    second = two_nodes.sbatch(*submit, user=learner, cwd=work,
                              env=dict(env, DLHACK_ARGS=f"--iterations {newest + 10} {TINY}"))
    info = two_nodes.wait_job(second, timeout=300)
    out = job_output(work, "dlhack-train", second)
    assert info["JobState"] == "COMPLETED", out
    match = re.search(r"snapshot: resumed from \S+ at iteration (\d+)", out)
    assert match and int(match.group(1)) >= newest, out
    metrics = json.loads((work / "run" / "metrics.json").read_text())
    print(f"resumed at iteration {match.group(1)}; {metrics.get('ranks', '?')} ranks; "
          f"communicator {metrics.get('communicator', '?')}")


def test_gpu_check_from_the_submit_folder(one_node, learner, site, work):
    """Submitted from the course's folder, with no DLHACK_HOME: SLURM_SUBMIT_DIR finds it."""
    env = {"DLHACK_DEVICE": "cpu", "DLHACK_VENV": str(site / "venv"),
           "DLHACK_GPU_CHECK_OUT": str(work / "gpu_check"), "DLHACK_ITERATIONS": "5",
           "DLHACK_N_TRAIN": "400"}
    job = one_node.sbatch("--export=ALL", "-o", work / "check-%j.out", JOBS / "gpu_check.sh",
                          user=learner, cwd=site / "course", env=env)
    info = one_node.wait_job(job, timeout=400)
    out = (work / f"check-{job}.out").read_text()
    assert info["JobState"] == "COMPLETED", out
    assert "DLHACK_DEVICE=cpu" in out and "gpu_check: all passed" in out, out
    assert "OK   allreduce ring  on numpy, 2 rank(s)" in out, out
    assert "pip" not in out.lower(), out  # nothing installed on the compute node
    assert re.search(r"128 units x 2 layers: \d+ sentences/s", out), out


def test_grade_class_job(one_node, learner, site, work):
    subs = work / "submitted"
    subs.mkdir()
    (subs / "alice.ipynb").write_bytes((ROOT / "solutions" / "02_collectives.ipynb").read_bytes())
    (subs / "bob.ipynb").write_bytes(
        (ROOT / "tests" / "grade" / "submissions" / "02_collectives" / "wrong_naive.ipynb"
         ).read_bytes())
    job = one_node.sbatch("--export=ALL", JOBS / "grade_class.sh", "submitted",
                          "--lab", "02_collectives", "--exercise", "allreduce_naive",
                          user=learner, cwd=work, env={"DLHACK_HOME": str(site / "course"),
                                                       "DLHACK_VENV": str(site / "venv")})
    info = one_node.wait_job(job, timeout=300)
    out = job_output(work, "dlhack-grade", job)
    assert info["JobState"] == "COMPLETED", out
    with open(work / f"grades-{job}.csv") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert set(rows) == {"alice", "bob"}, rows
    assert rows["alice"]["allreduce_naive"] == "3", rows
    assert rows["bob"]["allreduce_naive"] == "0", rows


def test_jupyter_compute_node(one_node, learners, learner, site, work):
    env = {"DLHACK_HOME": str(site / "course"), "DLHACK_VENV": str(site / "venv")}
    job = one_node.sbatch("--export=ALL", JOBS / "jupyter_compute_node.sh", user=learner,
                          cwd=work, env=env)
    urlfile = Path(learners.home(learner)) / ".dlhack" / f"jupyter-{job}.url"
    try:
        deadline = time.monotonic() + 120
        while not urlfile.exists():
            assert time.monotonic() < deadline, job_output(work, "dlhack-jupyter", job)
            time.sleep(1)
        assert urlfile.stat().st_mode & 0o077 == 0  # only the learner reads the token
        token = urlfile.read_text().split("token=")[1].strip()
        port = re.search(r"port (\d+)", job_output(work, "dlhack-jupyter", job)).group(1)
        url = f"http://127.0.0.1:{port}"
        specs = _get(f"{url}/api/kernelspecs?token={token}", deadline=time.monotonic() + 120)
        assert list(specs["kernelspecs"]) == ["dlhack"]  # the course's settings: one kernel
        try:
            urllib.request.urlopen(f"{url}/api/kernelspecs", timeout=10)
            raise AssertionError("the server answered without the token")
        except urllib.error.HTTPError as err:
            assert err.code == 403
        for proc in learners.processes(learner):
            assert token not in " ".join(proc.cmdline()), proc.cmdline()
    finally:
        one_node.run(["scancel", job], check=False)
    assert one_node.wait_job(job)["JobState"] == "CANCELLED"
    deadline = time.monotonic() + 30
    while learners.processes(learner) and time.monotonic() < deadline:
        time.sleep(0.5)
    assert not learners.processes(learner), [p.cmdline() for p in learners.processes(learner)]


def _get(url, deadline):
    while True:
        try:
            with urllib.request.urlopen(url, timeout=10) as response:
                return json.loads(response.read())
        except (urllib.error.URLError, ConnectionError):
            if time.monotonic() > deadline:
                raise
            time.sleep(1)

