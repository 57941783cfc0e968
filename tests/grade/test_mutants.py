"""Every graded exercise against plausible wrong answers (mutants): each must lose points, and a
failing test must say why.

A mutant is one file, ``tests/grade/mutants/<lab>/<EXERCISE>__<shortname>.py``, holding the complete
replacement source of the answer cell of ``solutions/<lab>.ipynb`` whose nbgrader ``grade_id`` is
EXERCISE. It starts with two header lines, then the cell::

    # MUTANT: what is wrong with this answer, for a reader
    # EXPECT: text that some failing test's message must contain (the cause, named)

A third header line ``# FAST`` puts the mutant in ``make test``; the others are marked ``slow``
(``make test-slow``), since every mutant costs a graded run per rank count. Each lab's loopholes
(answers that score without doing the work) are the ones to mark ``# FAST``; an exercise that
marks none has its first mutant (by file name) in ``make test``.

The runner builds the submission from the solution notebook with that one cell replaced, grades
only that exercise, and asserts that the exercise loses points and that a failing test's message
contains EXPECT. All the mutants collected in one session are graded together, sharing one pool of
rank slots, as ``dlhack grade FOLDER`` grades many submissions. When the slow mutants run too
(``make test-slow``), the unchanged solution is graded alongside, once per exercise: a mutant that
"loses points" only because the solution does too would prove nothing. (``make test`` leaves that
to tests/test_notebooks.py, which runs every solution's check cells.)
"""
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from gradetools import ROOT

from dlhack.grade import notebook
from dlhack.grade.harness import Slots, grade
from dlhack.grade.plan import load_plan

MUTANTS = Path(__file__).with_name("mutants")
MIN_PER_EXERCISE = 5
HEADER = re.compile(r"# MUTANT: (?P<what>.+)\n# EXPECT: (?P<expect>.+)\n(?P<fast># FAST\n)?")


def mutant_files():
    return sorted(MUTANTS.glob("*/*__*.py"))


def parse(path):
    """``(lab, exercise, what, expect, fast, cell source)`` of a mutant file."""
    text = path.read_text(encoding="utf-8")
    match = HEADER.match(text)
    if not match:
        raise ValueError(f"{path}: must start with '# MUTANT: ...' and '# EXPECT: ...' lines")
    exercise = path.stem.split("__")[0]
    return (path.parent.name, exercise, match["what"].strip(), match["expect"].strip(),
            bool(match["fast"]), text)


def solution_notebook(lab):
    return json.loads((ROOT / "solutions" / f"{lab}.ipynb").read_text(encoding="utf-8"))


def with_cell(nb, exercise, source):
    """The solution's answer cells as a Submission, the one with grade_id ``exercise`` replaced."""
    cells = []
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution"):
            if meta.get("grade_id") == exercise and source is not None:
                cell = {**cell, "source": source}
            cells.append(cell)
    return notebook.build(notebook.answer_cells({"cells": cells}), f"{exercise} mutant")


def fast_set():
    """The mutants ``make test`` grades: those marked ``# FAST``, else each exercise's first."""
    marked, first = set(), {}
    for path in mutant_files():
        match = HEADER.match(path.read_text(encoding="utf-8"))
        key = (path.parent.name, path.stem.split("__")[0])
        first.setdefault(key, path)
        if match and match["fast"]:
            marked.add(path)
    exercises = {(p.parent.name, p.stem.split("__")[0]) for p in marked}
    return marked | {path for key, path in first.items() if key not in exercises}


def cases():
    fast = fast_set()
    params = []
    for path in mutant_files():
        rel = path.relative_to(MUTANTS).as_posix()
        params.append(pytest.param(rel, id=rel[:-3], marks=[] if path in fast else [pytest.mark.slow]))
    return params


@pytest.fixture(scope="module")
def graded(request):
    """``{mutant or "LAB/EXERCISE" (the solution): result}`` for the mutants this session runs."""
    wanted = sorted({item.callspec.params["mutant"] for item in request.session.items
                     if item.module is request.module and hasattr(item, "callspec")
                     and "mutant" in item.callspec.params})
    parsed = {rel: parse(MUTANTS / rel) for rel in wanted}
    fast = fast_set()
    controls = any(MUTANTS / rel not in fast for rel in wanted)  # the full set only
    jobs = {}
    for rel, (lab, exercise, _, _, _, source) in parsed.items():
        jobs[rel] = (lab, exercise, source)
        if controls:  # the unchanged solution, once per exercise
            jobs.setdefault(f"{lab}/{exercise}", (lab, exercise, None))
    # Rank slots shared by every grading: by default the grader's (the core count, at least 4).
    slots = Slots(int(os.environ.get("DLHACK_MUTANT_SLOTS", "0")) or None)
    notebooks = {lab: solution_notebook(lab) for lab, _, _ in jobs.values()}
    plans = {lab: load_plan(lab) for lab in notebooks}  # collected once, before the threads

    def one(item):
        key, (lab, exercise, source) = item
        submission = with_cell(notebooks[lab], exercise, source)
        return key, grade(plans[lab], submission, exercises=[exercise], slots=slots)

    with ThreadPoolExecutor(max_workers=max(1, min(len(jobs), 32))) as pool:
        return dict(pool.map(one, jobs.items()))


def messages(exercise_result):
    """Every failure message of the exercise's tests, at every rank count."""
    found = []
    for test in exercise_result["tests"]:
        if test["outcome"] != "passed":
            found.append(test["message"])
            found += [run.get("message", "") for run in test["runs"]]
    return [m for m in found if m]


@pytest.mark.parametrize("mutant", cases())
def test_mutant_loses_points_with_a_message_naming_the_cause(mutant, graded):
    lab, exercise, what, expect, _, _ = parse(MUTANTS / mutant)
    if f"{lab}/{exercise}" in graded:
        control = graded[f"{lab}/{exercise}"]["exercises"][0]
        assert control["score"] == control["max_score"], (
            f"the unchanged solution scores {control['score']} / {control['max_score']} on "
            f"{exercise}: {messages(control)[:1]}")
    result = graded[mutant]
    assert result["status"] == "graded", f"{mutant}: {result['status']}: {result['message']}"
    ex = result["exercises"][0]
    errors = [t["message"] for t in ex["tests"] if t["outcome"] == "error"]
    assert not errors, f"{mutant}: tests could not run (not the mutant's doing): {errors[0]}"
    assert ex["score"] < ex["max_score"], (
        f"{mutant} ({what}) scores full marks, {ex['score']} / {ex['max_score']}")
    found = messages(ex)
    assert any(expect in m for m in found), (
        f"{mutant} ({what}) loses points, but no failure message contains {expect!r}; "
        f"they say: {found[:3]}")


def test_mutant_files_are_well_formed():
    """Headers, a known exercise, a cell that compiles, and a source unlike the solution's."""
    assert mutant_files(), f"no mutants under {MUTANTS}"
    for path in mutant_files():
        lab, exercise, _, expect, _, source = parse(path)
        assert expect, f"{path}: EXPECT is empty"
        assert exercise in load_plan(lab).exercises, f"{path}: {lab} has no exercise {exercise}"
        compile(notebook.clean_cell(source), str(path), "exec")  # as the grader reads the cell
        solution = [c for c in solution_notebook(lab)["cells"]
                    if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == exercise]
        assert len(solution) == 1, f"{path}: no answer cell with grade_id {exercise}"
        body = source.split("\n", 3 if parse(path)[4] else 2)[-1]
        assert body.strip() != "".join(solution[0]["source"]).strip(), f"{path}: is the solution"


def test_every_exercise_has_enough_mutants():
    """Each graded exercise of a lab with a mutants folder has at least five wrong answers."""
    for folder in sorted({p.parent for p in mutant_files()}):
        counts = {name: 0 for name in load_plan(folder.name).exercises}
        for path in folder.glob("*__*.py"):
            counts[path.stem.split("__")[0]] = counts.get(path.stem.split("__")[0], 0) + 1
        short = {name: n for name, n in counts.items() if n < MIN_PER_EXERCISE}
        assert not short, f"{folder.name}: exercises with fewer than {MIN_PER_EXERCISE} mutants: {short}"
