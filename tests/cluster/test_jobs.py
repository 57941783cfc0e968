"""The scripts in jobs/: every one parses, and gpu_check.sh refuses clearly without a GPU."""
import importlib.util
import os
import subprocess
from pathlib import Path

import pytest

from tests.support import ROOT

JOBS = ROOT / "jobs"
SCRIPTS = sorted(JOBS.glob("*.sh"))


def test_there_are_job_scripts():
    names = {p.name for p in SCRIPTS}
    assert {"gpu_check.sh", "train_pbs.sh", "train_slurm.sh", "jupyter_compute_node.sh",
            "fake_cluster.sh", "netns_ssh.sh", "grade_class.sh"} <= names


@pytest.mark.parametrize("script", SCRIPTS, ids=lambda p: p.name)
def test_bash_parses(script):
    result = subprocess.run(["bash", "-n", str(script)], capture_output=True, text=True,
                            check=False)
    assert result.returncode == 0, result.stderr


def path_without(program):
    """$PATH minus the directories that hold ``program``."""
    dirs = os.environ.get("PATH", "").split(os.pathsep)
    return os.pathsep.join(d for d in dirs if not (Path(d) / program).exists())


def gpu_check(path, **env):
    return subprocess.run([str(JOBS / "gpu_check.sh")], capture_output=True, text=True,
                          timeout=60, check=False,
                          env=dict(os.environ, PATH=path, **env))


def test_gpu_check_without_gpu_says_so():
    result = gpu_check(path_without("nvidia-smi"))
    assert result.returncode == 3, result.stdout + result.stderr
    assert "gpu_check: no GPU: nvidia-smi is not installed" in result.stderr


@pytest.mark.skipif(importlib.util.find_spec("cupy") is not None, reason="CuPy is installed")
def test_gpu_check_without_cupy_says_so(tmp_path):
    """A GPU that nvidia-smi lists but CuPy cannot use: a stub nvidia-smi stands in."""
    stub = tmp_path / "nvidia-smi"
    stub.write_text('#!/bin/sh\necho "GPU 0: Stub GPU (UUID: GPU-stub)"\n')
    stub.chmod(0o755)
    result = gpu_check(f"{tmp_path}{os.pathsep}{path_without('nvidia-smi')}")
    assert result.returncode == 4, result.stdout + result.stderr
    assert "gpu_check: no CuPy: CuPy does not import" in result.stderr


def test_pbs_hostfile_line_groups_ranks_by_node(tmp_path):
    """train_pbs.sh turns $PBS_NODEFILE (a node once per rank) into hydra's host:ranks."""
    text = (JOBS / "train_pbs.sh").read_text()
    program = text.split("awk '", 1)[1].split("'", 1)[0]
    nodefile = tmp_path / "nodefile"
    nodefile.write_text("n7\nn7\nn3\nn3\n")
    result = subprocess.run(["awk", program, str(nodefile)], capture_output=True, text=True,
                            check=True)
    assert result.stdout.split() == ["n7:2", "n3:2"]
