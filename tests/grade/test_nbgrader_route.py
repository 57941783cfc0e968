"""nbgrader's own route (``nbgrader generate_assignment`` then ``autograde``), with the course's
check cells: where the sandbox exists it gives the scores ``dlhack grade`` gives; where it does
not, autograde fails loudly for the submission (its log, its exit status) and records no score,
which nbgrader's formgrader shows as needing grading: never a quiet 0.

Slow (an nbgrader run executes the whole lab: minutes on a loaded machine), so one submission
each way."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from dlhack.grade import grade_notebook
from tests.grade.gradetools import PLANTED, SOLUTION

LAB = "02_collectives"
NBGRADER = [sys.executable, "-m", "nbgrader"]


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """An nbgrader course whose source is the lab's solution, the assignment generated."""
    root = tmp_path_factory.mktemp("course")
    (root / "source" / LAB).mkdir(parents=True)
    shutil.copyfile(SOLUTION, root / "source" / LAB / f"{LAB}.ipynb")
    (root / "nbgrader_config.py").write_text(
        "c = get_config()\nc.CourseDirectory.course_id = 'dlhack'\n"
        f"c.CourseDirectory.root = {str(root)!r}\nc.Execute.timeout = 600\n")
    nbgrader(root, "generate_assignment", LAB, "--force")
    return root


def nbgrader(root, *args, env=None, check=True):
    proc = subprocess.run([*NBGRADER, *args], cwd=root, capture_output=True, text=True,
                          env=env, timeout=900, check=False)
    assert proc.returncode == 0 or not check, proc.stderr[-3000:]
    return proc


def submit(root, student, notebook):
    folder = root / "submitted" / student / LAB
    folder.mkdir(parents=True)
    shutil.copyfile(notebook, folder / f"{LAB}.ipynb")
    return folder / f"{LAB}.ipynb"


def gradebook_scores(root, student, kind="score"):
    """``{exercise: score}`` from nbgrader's gradebook (``auto_score``: None when autograde
    recorded nothing), and whether nbgrader flags the submission for a person to grade."""
    from nbgrader.api import Gradebook
    with Gradebook(f"sqlite:///{root / 'gradebook.db'}") as gb:
        sub = gb.find_submission(LAB, student)
        return ({g.name.removeprefix("check_"): getattr(g, kind)
                 for nb in sub.notebooks for g in nb.grades}, sub.needs_manual_grade)


def test_autograde_gives_the_scores_dlhack_grade_gives(course):
    path = submit(course, "bob", PLANTED / "wrong_naive.ipynb")
    ours = grade_notebook(path, lab=LAB)
    nbgrader(course, "autograde", LAB, "--student", "bob")
    theirs, _ = gradebook_scores(course, "bob")
    assert theirs == {ex["name"]: ex["score"] for ex in ours["exercises"]}, (theirs, ours)
    assert theirs["allreduce_naive"] == 0 and sum(theirs.values()) == ours["score"] > 0


def test_autograde_without_a_sandbox_refuses_loudly(course, tmp_path):
    submit(course, "carol", SOLUTION)
    bare = tmp_path / "bin"  # the course's tools, and no bwrap
    bare.mkdir()
    for tool in ("mpiexec", "python", "python3"):
        if (Path(sys.executable).parent / tool).exists():
            (bare / tool).symlink_to(Path(sys.executable).parent / tool)
    env = {**os.environ, "PATH": str(bare)}
    proc = nbgrader(course, "autograde", LAB, "--student", "carol", env=env, check=False)
    assert proc.returncode != 0, proc.stderr[-3000:]
    assert "refuses to score under nbgrader: refusing to grade untrusted work without a " \
           "sandbox" in proc.stderr, proc.stderr[-3000:]
    # nbgrader keeps the submission with no automatic score, flagged for a person: not a 0
    scores, flagged = gradebook_scores(course, "carol", "auto_score")
    assert set(scores.values()) == {None} and flagged, scores
