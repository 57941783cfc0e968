"""What the sandbox needs and says, and the smaller ways a submission used to confuse the grader:
an old notebook format, another language's kernel, a lab that its name and metadata disagree
on, an output flood. (The attacks are in test_attacks.py.)"""
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
from tests.grade.gradetools import PLANTED, SOLUTION, time_bound
from tests.support import ROOT

NAIVE = ["allreduce_naive"]


def flat(result):
    return " ".join(feedback(result).split())


@pytest.mark.parametrize(("name", "phrase"), [
    ("nbformat3", "in the old format 3 (before 2015), which the grader does not read"),
    ("r_kernel", "is a notebook for r (kernel ir), but the labs are graded as Python")])
def test_a_notebook_it_cannot_grade_gets_a_clear_reason(name, phrase):
    result = grade_notebook(PLANTED / f"{name}.ipynb")
    assert result["status"] == "invalid" and phrase in result["message"], result["message"]


def test_a_lab_that_name_and_metadata_disagree_on_is_named_in_a_warning(workdir):
    result = grade_notebook(PLANTED / "lab_mismatch.ipynb", exercises=NAIVE, workdir=workdir)
    assert (result["lab"], result["score"]) == ("02_collectives", 3), feedback(result)
    assert ("which lab is lab_mismatch.ipynb? its metadata says 05_large_batch and its name says "
            "02_collectives: graded as 02_collectives, from its name") in flat(result)


def test_an_output_flood_fails_only_the_flooding_submission_and_says_so(workdir):
    result = grade_notebook(PLANTED / "flood.ipynb", exercises=NAIVE, timeout=8, workdir=workdir)
    assert result["score"] == 0 and result["status"] != "incomplete", feedback(result)
    assert "wrote more than 64 MB of output (it was cut there)" in flat(result)


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
    """What learner code sees: nobody, no network, no solutions, a read-only project."""
    sub, _ = notebook.from_notebook(SOLUTION)
    probe = '''
import os, socket
from pathlib import Path
_root = Path(__import__("importlib.util").util.find_spec("dlhack").origin).parents[2]
assert os.getuid() == 65534, os.getuid()
assert not (_root / "solutions" / "02_collectives.ipynb").exists()
assert os.listdir(_root / "tests") == []
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
