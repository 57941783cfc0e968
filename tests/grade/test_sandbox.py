"""The sandbox of a graded run (dlhack.grade.sandbox): the grader refuses untrusted work without
it, what learner code sees inside it, and what it costs. (The attacks it stops are in
test_attacks.py.)"""
import shutil
import subprocess
import sys
import time

import pytest

from dlhack.grade import grade, grade_notebook, notebook, sandbox
from dlhack.grade.cli import main
from dlhack.grade.plan import LabError, load_plan
from dlhack.grade.report import feedback
from dlhack.jobs.mpiexec import find_mpiexec
from tests.grade.gradetools import SOLUTION, time_bound
from tests.support import ROOT

NAIVE = ["allreduce_naive"]



def test_without_a_sandbox_the_grader_refuses_unless_trusted(workdir, monkeypatch, capsys):
    monkeypatch.setattr(sandbox, "find_bwrap", lambda: None)
    sandbox.unavailable.cache_clear()
    try:
        with pytest.raises(LabError, match="refusing to grade untrusted work without a sandbox: "
                                           "bubblewrap .bwrap. is not installed"):
            grade_notebook(SOLUTION, exercises=NAIVE, workdir=workdir)
        assert main([str(SOLUTION), "-e", "allreduce_naive"]) == 2
        assert "--trusted" in capsys.readouterr().err
        result = grade_notebook(SOLUTION, exercises=NAIVE, workdir=workdir, trusted=True)
        assert (result["score"], result["sandboxed"]) == (3, False), feedback(result)
    finally:
        sandbox.unavailable.cache_clear()


def test_inside_the_sandbox(workdir):
    """What learner code sees: nobody, no network, no solutions or tests, a read-only project."""
    sub, _ = notebook.from_notebook(SOLUTION)
    probe = '''
import os, socket
from pathlib import Path
_root = Path(__import__("importlib.util").util.find_spec("dlhack").origin).parents[2]
assert os.getuid() == 65534, os.getuid()
assert not (_root / "solutions" / "02_collectives.ipynb").exists()
assert os.listdir(_root / "tests") == [] and os.listdir(_root / "graded") == []
assert [i for _, i in socket.if_nameindex()] == ["lo"]
try:
    open(_root / "zz_dlhack_poison.txt", "x")
    raise AssertionError("the project is writable")
except OSError as err:
    assert err.errno == 30, err
assert len([p for p in os.listdir("/proc") if p.isdigit()]) < 20, os.listdir("/proc")
'''
    result = grade(load_plan("02_collectives"), notebook.Submission(
        text=sub.text + probe, spans=sub.spans), exercises=NAIVE, workdir=workdir)
    assert result["score"] == 3, feedback(result)


def test_sandbox_start_up_costs_little(tmp_path, capsys):
    """What the sandbox adds to each run: bwrap with every mount a run gets, around a bare
    Python, against the bare Python alone (the times are printed)."""
    for name in ("bin", "tests", "work", "run"):
        (tmp_path / name).mkdir()
    (tmp_path / "submission.py").write_text("")
    prefix = sandbox.command(sandbox.Paths(
        root=ROOT, bin=tmp_path / "bin", tests=tmp_path / "tests", work=tmp_path / "work",
        submission=tmp_path / "submission.py", run_dir=tmp_path / "run",
        mpiexec=find_mpiexec()))
    bare = [sys.executable, "-S", "-c", "pass"]

    def fastest(cmd):
        times = []
        for _ in range(5):
            start = time.monotonic()
            subprocess.run(cmd, check=True)
            times.append(time.monotonic() - start)
        return min(times)

    plain, sealed = fastest(bare), fastest(prefix + bare)
    with capsys.disabled():
        print(f"\nstart-up: {plain * 1000:.0f} ms plain, {sealed * 1000:.0f} ms in the sandbox")
    assert sealed - plain < time_bound(0.5)


def test_the_sandbox_finds_bwrap_on_path():
    assert sandbox.find_bwrap() == shutil.which("bwrap")
    assert sandbox.unavailable() is None, sandbox.unavailable()
