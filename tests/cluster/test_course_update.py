"""A course update reaches a learner's copy without undoing their work (deploy/publish.sh, then
nbgitpuller as each hub server runs it before it starts, deploy/jupyterhub_config.py).

The learner (a Unix user) pulls the published course into ~/dlhack, edits a lab; the course then
changes that lab elsewhere and gains a new lab; the next pull brings both changes in and keeps
the learner's edit. Solutions are never published. Needs root (a learner, git's ownership check
between users); skipped otherwise, except in CI.
"""
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support import ROOT

PUBLISH = ROOT / "deploy" / "publish.sh"


def pull(learners, name, site, prefix):
    """What the hub's prologue runs, as the learner."""
    home = learners.home(name)
    return subprocess.run(
        ["runuser", "-u", name, "--", "env", f"HOME={home}",
         f"GIT_CONFIG_GLOBAL={prefix / 'learners.gitconfig'}",
         str(site / "venv" / "bin" / "gitpuller"), f"file://{prefix / 'learners.git'}", "main",
         f"{home}/dlhack"], cwd=home, capture_output=True, text=True, timeout=120, check=False)


@pytest.fixture
def base():
    """A folder the learner can read (pytest's own are root's only), removed afterwards."""
    path = Path(tempfile.mkdtemp(prefix="dlhack-course-"))
    path.chmod(0o755)
    yield path
    shutil.rmtree(path)


def test_update_merges_with_the_learners_work(site, learners, learner, base):
    course, prefix = base / "course", base / "prefix"
    shutil.copytree(ROOT / "labs", course / "labs", ignore=shutil.ignore_patterns("*.py"))
    shutil.copytree(ROOT / "lessons", course / "lessons", ignore=shutil.ignore_patterns("*.py"))
    (course / "solutions").mkdir()
    (course / "solutions" / "answers.txt").write_text("never published")
    prefix.mkdir()
    subprocess.run([str(PUBLISH), str(prefix), str(course)], check=True, capture_output=True)

    first = pull(learners, learner, site, prefix)
    assert first.returncode == 0, first.stdout + first.stderr
    copy = Path(learners.home(learner)) / "dlhack"
    readme = copy / "labs" / "README.md"
    mine = readme.read_text().replace("\n", "\nMY NOTE: learner's own line\n", 1)
    subprocess.run(["runuser", "-u", learner, "--", "tee", str(readme)], input=mine, text=True,
                   capture_output=True, check=True)

    upstream = (course / "labs" / "README.md").read_text() + "\nFixed during the event.\n"
    (course / "labs" / "README.md").write_text(upstream)
    (course / "labs" / "99_new.ipynb").write_text('{"cells": [], "metadata": {}, '
                                                  '"nbformat": 4, "nbformat_minor": 5}\n')
    subprocess.run([str(PUBLISH), str(prefix), str(course)], check=True, capture_output=True)
    second = pull(learners, learner, site, prefix)
    assert second.returncode == 0, second.stdout + second.stderr

    merged = readme.read_text()
    assert "MY NOTE: learner's own line" in merged
    assert "Fixed during the event." in merged
    assert (copy / "labs" / "99_new.ipynb").is_file()
    assert not (copy / "solutions").exists()
    listed = subprocess.run(["git", "-C", str(prefix / "learners.git"), "ls-tree", "-r",
                             "--name-only", "main"], capture_output=True, text=True, check=True)
    assert not [f for f in listed.stdout.split() if not f.startswith(("labs/", "lessons/"))]

