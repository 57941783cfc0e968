"""Attacks a determined learner would plant (tests/grade/attacks.py, made into notebooks by
make_submissions.py) fail: alone, against a classmate graded after them, and in a class folder,
where each learner gets exactly the grade they get alone. Every run is sandboxed
(src/dlhack/grade/sandbox.py); nothing of a grading is alive 5 s after it ends.

All grade one exercise of lab 02 (allreduce_naive: 6 runs), which keeps this file to a few
minutes on two cores; the class of 30+ is marked slow.
"""
import json
import os
import shutil
import sysconfig
import time
from pathlib import Path

import pytest

from dlhack.grade import grade_notebook
from dlhack.grade.cli import main
from dlhack.grade.report import feedback
from tests.grade import attacks
from tests.grade.gradetools import PLANTED, SOLUTION, flat
from tests.support import ROOT

TIMEOUT = 8
NAIVE = ["allreduce_naive"]
# learner: (status, points of 3 on allreduce_naive, a phrase its feedback must hold)
FULL = ("graded", 3, "allreduce_naive: 3 / 3")
WRONG = ("graded", 0, "the result differs from the serial reference")
STUB = ("graded", 0, "allreduce_naive still raises NotImplementedError")
EXPECT = {
    "solution": FULL, "wrong_naive": WRONG,
    "saboteur": FULL, "forger": FULL, "escape": FULL, "frame_key": STUB,
    "gc_recorder": ("tampered", 0, "your code replaced Recorder.record while the test ran"),
    "patch_numpy": ("tampered", 0, "numpy.isclose"),
    "poison": WRONG, "read_solution": STUB,
    "keyboard_interrupt": ("graded", 0, "raised KeyboardInterrupt: the code was interrupted"),
    "pytest_exit": ("error", 0, "raised Exit: planted: stop here"),
}
CLASS = list(EXPECT)
# The class in the normal suite: ten learners, one of each attack the sandbox alone stops, and
# correct and wrong answers beside them; the slow test takes every plant three times.
SMALL_CLASS = [name for name in CLASS if name not in ("frame_key", "poison")]


def path_of(name):
    return SOLUTION if name == "solution" else PLANTED / f"{name}.ipynb"


def poison_left():
    """Files the poisoning attack would have created, had it got through."""
    places = [ROOT / "graded", ROOT / "graded" / "02_collectives",
              ROOT / "src" / "dlhack" / "grade", ROOT / "solutions",
              Path(sysconfig.get_paths()["purelib"])]
    found = [p for place in places for p in sorted(place.glob("zz_dlhack_poison*"))]
    hook = ROOT / "graded" / "02_collectives" / "conftest.py"
    return found + ([hook] if hook.exists() else [])


@pytest.fixture
def no_poison():
    assert not poison_left(), "poison from an earlier run: remove it first"
    yield
    left = poison_left()
    for path in left:
        path.unlink()  # the defence failed: undo the attack before anything else reads it
    assert not left, f"learner code wrote into the project or the environment: {left}"


# Their daemons, found by their unique sleep lengths wherever they escaped to.
ESCAPED = tuple(f"sleep {tag}" for tag in attacks.ESCAPE_TAGS)


def graded(name, workdir, **options):
    return grade_notebook(path_of(name), lab="02_collectives", exercises=NAIVE, timeout=TIMEOUT,
                          workdir=workdir, **options)


def verdict(result):
    return result["status"], result["score"]


def says(result, phrase):
    return phrase in flat(result)


ATTACKERS = ("saboteur", "forger", "poison")  # graded alone, then a classmate, below


@pytest.mark.parametrize("name", [name for name in CLASS if name not in ATTACKERS])
def test_each_attack_fails_alone(name, workdir, no_poison, leftovers):
    status, score, phrase = EXPECT[name]
    result = graded(name, workdir)
    ended = time.monotonic()
    assert verdict(result) == (status, score), feedback(result)
    assert says(result, phrase), f"{phrase!r} not in:\n{feedback(result)}"
    assert result["sandboxed"]
    left = 5 - (time.monotonic() - ended)
    assert leftovers(workdir, *ESCAPED, below=os.getpid(), wait=left) == []


@pytest.mark.parametrize(("attacker", "victim"), [("saboteur", "solution"),
                                                  ("forger", "wrong_naive"),
                                                  ("poison", "wrong_naive")])
def test_an_attack_cannot_touch_a_classmate_graded_after_it(attacker, victim, workdir,
                                                           no_poison, leftovers):
    """The attacker's daemons would live 40 s; the classmate is graded at once, in the same
    folder, and gets what it gets alone."""
    first = graded(attacker, workdir)
    assert verdict(first) == EXPECT[attacker][:2], feedback(first)
    result = graded(victim, workdir)
    assert verdict(result) == EXPECT[victim][:2], feedback(result)
    assert leftovers(workdir, below=os.getpid(), wait=5) == []


def grade_class(folder, tmp_path, capsys):
    out = tmp_path / "out"
    status = main([str(folder), "-e", "allreduce_naive", "-t", str(TIMEOUT), "-q",
                   "--json", str(out / "class.json"), "--csv", str(out / "class.csv"),
                   "--html", str(out / "class.html")])
    capsys.readouterr()
    results = json.loads((out / "class.json").read_text())["submissions"]
    return status, {os.path.basename(r["submission"])[:-6]: r for r in results}, out


def class_folder(tmp_path, copies, names):
    folder = tmp_path / "02_collectives"
    folder.mkdir()
    for k in range(copies):
        for name in names:
            shutil.copyfile(path_of(name), folder / f"{name}-{k}.ipynb")
    return folder


def check_class(results, count):
    assert len(results) == count
    wrong = {}
    for learner, result in results.items():
        name = learner.rsplit("-", 1)[0]
        if verdict(result) != EXPECT[name][:2] or not says(result, EXPECT[name][2]):
            wrong[learner] = (verdict(result), feedback(result))
    assert not wrong, "graded differently than alone:\n" + "\n".join(map(str, wrong.items()))


def test_a_class_folder_grades_each_learner_as_alone(tmp_path, capsys, no_poison, leftovers):
    folder = class_folder(tmp_path, 1, SMALL_CLASS)
    status, results, out = grade_class(folder, tmp_path, capsys)
    assert status == 0, "a folder that was graded in full exits 0, whatever the scores"
    check_class(results, len(SMALL_CLASS))
    rows = (out / "class.csv").read_text().splitlines()
    assert rows[0] == "learner,lab,status,score,max_score,allreduce_naive"
    assert "gc_recorder-0,02_collectives,tampered,0,3,0/3" in rows
    page = (out / "class.html").read_text()
    assert "<td>test_sum_matches_serial</td><td>6 / 10</td>" in page
    assert leftovers(tmp_path, *ESCAPED, below=os.getpid(), wait=5) == []


@pytest.mark.slow
def test_a_class_of_36_grades_each_learner_as_alone(tmp_path, capsys, no_poison, leftovers):
    folder = class_folder(tmp_path, 3, CLASS)
    start = time.monotonic()
    status, results, _ = grade_class(folder, tmp_path, capsys)
    with capsys.disabled():
        print(f"\ngraded {len(results)} submissions in {time.monotonic() - start:.0f} s")
    assert status == 0
    check_class(results, 3 * len(CLASS))
    assert leftovers(tmp_path, *ESCAPED, below=os.getpid(), wait=5) == []
