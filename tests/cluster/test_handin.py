"""From hand-in to feedback, without the browser: three Unix learners hand lab 02 in through
nbgrader's exchange (``dlhack submit``, from the shared course environment): one right, one
wrong, one that hangs. The instructor collects (``nbgrader collect``), grades the collected tree
(``dlhack grade``), releases the feedback (``nbgrader release_feedback``); each learner fetches
their own page and only theirs, and no learner can read another's hand-in or feedback.

The JupyterLab side of the same exchange (the Assignments tab, in Chromium) is not driven here.
"""
import csv
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from learners import Learners
from slurm import require, unavailable

from dlhack.grade.cli import main as grade
from tests.grade.gradetools import PLANTED, SOLUTION

LAB = "02_collectives"
COURSE_ID = "dlhack"
KINDS = {"right": SOLUTION, "wrong": PLANTED / "wrong_naive.ipynb",
         "hangs": PLANTED / "infinite_loop.ipynb"}
# allreduce_naive (3 points) and average_gradients (3): the hanging one loops in the latter.
SCORES = {"right": "6", "wrong": "3", "hangs": "3"}


@pytest.fixture(scope="module")
def trio():
    require(unavailable())
    with Learners(3, prefix=f"dh{os.getpid() % 100000}") as learners:
        yield dict(zip(KINDS, learners.names)), learners


@pytest.fixture(scope="module")
def exchange():
    root = Path(tempfile.mkdtemp(prefix="dlhack-exchange-"))
    root.chmod(0o755)  # as /srv/nbgrader/exchange: everyone may enter, nbgrader sets the rest
    yield root
    shutil.rmtree(root, ignore_errors=True)


def nbgrader(course, exchange, *args):
    proc = subprocess.run([sys.executable, "-m", "nbgrader", *args, f"--course={COURSE_ID}",
                           f"--Exchange.root={exchange}"], cwd=course, text=True,
                          capture_output=True, timeout=600, check=False)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    return proc


def as_learner(learners, name, *argv, check=True):
    home = learners.home(name)
    proc = subprocess.run(["runuser", "-u", name, "--", "env", f"HOME={home}", *argv],
                          cwd=home, capture_output=True, text=True, timeout=300, check=False)
    assert proc.returncode == 0 or not check, proc.stdout + proc.stderr
    return proc


def test_three_learners_hand_in_and_each_sees_only_their_feedback(site, trio, exchange,
                                                                  tmp_path):
    who, learners = trio
    course = tmp_path / "course"
    (course / "source" / LAB).mkdir(parents=True)
    shutil.copyfile(SOLUTION, course / "source" / LAB / f"{LAB}.ipynb")
    nbgrader(course, exchange, "generate_assignment", LAB, "--force")
    nbgrader(course, exchange, "release_assignment", LAB)
    dlhack = str(site / "venv" / "bin" / "dlhack")
    for kind, name in who.items():
        mine = learners.folder(name, "dlhack") / f"{LAB}.ipynb"
        shutil.copyfile(KINDS[kind], mine)
        shutil.chown(mine, name, name)
        out = as_learner(learners, name, dlhack, "submit", LAB, str(mine),
                         f"--course={COURSE_ID}", f"--exchange={exchange}").stdout
        assert f"{LAB}: handed in" in out and " UTC)" in out, out
    first, second = who["right"], who["wrong"]
    inbound = exchange / COURSE_ID / "inbound"
    peek = as_learner(learners, second, "ls", str(inbound), check=False)
    assert peek.returncode != 0 and "Permission denied" in peek.stderr  # no listing the box
    peek = as_learner(learners, second, "cat",
                      str(Path(learners.home(first)) / "dlhack" / f"{LAB}.ipynb"), check=False)
    assert peek.returncode != 0  # nor a classmate's copy
    history = as_learner(learners, first, dlhack, "submit", "--history",
                         f"--course={COURSE_ID}", f"--exchange={exchange}").stdout
    assert f"{first} {LAB} " in history and second not in history, history

    nbgrader(course, exchange, "collect", LAB)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(who.values())
    status = grade([str(course / "submitted"), "--lab", LAB, "-e", "allreduce_naive",
                    "-e", "average_gradients", "-t", "8", "--csv", str(tmp_path / "grades.csv"),
                    "--feedback", str(course / "feedback"), "-q"])
    assert status == 0
    with open(tmp_path / "grades.csv") as f:
        rows = {row["student_id"]: row["score"] for row in csv.DictReader(f)}
    assert rows == {name: SCORES[kind] for kind, name in who.items()}, rows

    nbgrader(course, exchange, "release_feedback", LAB)
    outbound = exchange / COURSE_ID / "feedback"
    peek = as_learner(learners, second, "ls", str(outbound), check=False)
    assert peek.returncode != 0  # pages are filed by a secret each learner alone holds
    pages = {}
    for kind, name in who.items():
        as_learner(learners, name, dlhack, "submit", "--feedback", LAB,
                   f"--course={COURSE_ID}", f"--exchange={exchange}")
        found = list((Path(learners.home(name)) / LAB / "feedback").rglob("*.html"))
        assert len(found) == 1, found
        pages[kind] = found[0].read_text()
        others = [n for n in who.values() if n != name]
        assert f"feedback for {name}" in pages[kind]
        assert not any(f"feedback for {n}" in pages[kind] for n in others)
    assert "no rank finished within" in pages["hangs"]
    assert "rank" in pages["wrong"] and "allreduce_naive" in pages["wrong"]
    peek = as_learner(learners, second, "cat", str(Path(learners.home(first)) / LAB), check=False)
    assert peek.returncode != 0
