"""From hand-in to feedback, without the browser: three Unix learners hand lab 02 in through
nbgrader's exchange (``dlhack submit``, from the shared course environment): one right, one
wrong, one that hangs. The instructor collects (``nbgrader collect``), grades the collected tree
(``dlhack grade``), releases the feedback (``nbgrader release_feedback``); each learner fetches
their own page and only theirs, and no learner can read another's hand-in or feedback.

The same hand-in from the learners' JupyterLab on the hub, in Chromium, is
tests/browser/test_handin_in_browser.py, which `make test` runs; this one, its twin without the
hub (for a site that grades without JupyterHub), runs in `make test-slow`.
"""
import csv
import os
import shutil
from pathlib import Path

import pytest
from exchange import COURSE_ID, Exchange, as_learner
from learners import Learners
from slurm import require, unavailable

from dlhack.grade.cli import main as grade
from tests.grade.gradetools import PLANTED, SOLUTION

pytestmark = pytest.mark.slow

LAB = "02_collectives"
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
def box():
    with Exchange() as ex:
        yield ex


def test_three_learners_hand_in_and_each_sees_only_their_feedback(site, trio, box, tmp_path):
    who, learners = trio
    exchange = box.root
    course = tmp_path / "course"
    box.release(course, LAB, SOLUTION)
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

    box.nbgrader(course, "collect", LAB)
    assert sorted(p.name for p in (course / "submitted").iterdir()) == sorted(who.values())
    status = grade([str(course / "submitted"), "--lab", LAB, "-e", "allreduce_naive",
                    "-e", "average_gradients", "-t", "8", "--csv", str(tmp_path / "grades.csv"),
                    "--feedback", str(course / "feedback"), "-q"])
    assert status == 0
    with open(tmp_path / "grades.csv") as f:
        rows = {row["student_id"]: row["score"] for row in csv.DictReader(f)}
    assert rows == {name: SCORES[kind] for kind, name in who.items()}, rows

    box.nbgrader(course, "release_feedback", LAB)
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
