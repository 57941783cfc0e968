"""Every graded exercise against plausible wrong answers (mutants): each must lose points, and a
failing test must say why.

A mutant is one file, ``tests/grade/mutants/<lab>/<EXERCISE>__<shortname>.diff``: two header
lines, then a unified diff (``--- solution`` / ``+++ mutant``) of the answer cell of
``solutions/<lab>.ipynb`` whose nbgrader ``grade_id`` is EXERCISE, so the file shows the mistake
and nothing else::

    # MUTANT: what is wrong with this answer, for a reader
    # EXPECT: text that some failing test's message must contain (the cause, named)
    --- solution
    +++ mutant
    @@ -13,5 +13,5 @@
    -    total = np.array(x, copy=True)
    +    total = x

The diff is applied to the solution as it is now: when the solution changes where a mutant
changes it, the mutant no longer applies and ``test_mutant_files_are_well_formed`` names it.

A third header line ``# FAST`` puts the mutant in ``make test``; the others are marked ``slow``
(``make test-slow``), since every mutant costs a graded run per rank count. Each lab's loopholes
(answers that score without doing the work) are the ones to mark ``# FAST``; an exercise that
marks none has its first mutant (by file name) in ``make test``.

This module builds the submission from the solution notebook with that one cell replaced, grades
only that exercise, and asserts that the exercise loses points and that a failing test's message
contains EXPECT. All the mutants collected in one session are graded together, sharing one pool of
rank slots, as ``dlhack grade FOLDER`` grades many submissions. When the slow mutants run too
(``make test-slow``), the unchanged solution is graded alongside, once per exercise: a mutant that
"loses points" only because the solution does too would prove nothing. (``make test`` leaves that
to tests/course/test_notebooks.py, which runs every solution's check cells.)
"""
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dlhack.grade import notebook
from dlhack.grade.plan import load_plan
from dlhack.grade.schedule import Slots, grade
from tests.grade.gradetools import solution_cell, solution_notebook, with_cell

MUTANTS = Path(__file__).with_name("mutants")
MIN_PER_EXERCISE = 5
HEADER = re.compile(r"# MUTANT: (?P<what>.+)\n# EXPECT: (?P<expect>.+)\n(?P<fast># FAST\n)?")


HUNK = re.compile(r"@@ -(\d+)(?:,(\d+))? \+\d+(?:,\d+)? @@")


def mutant_files():
    return sorted(MUTANTS.glob("*/*__*.diff"))


def parse(path):
    """``(lab, exercise, what, expect, fast, cell source)`` of a mutant file."""
    text = path.read_text(encoding="utf-8")
    match = HEADER.match(text)
    if not match:
        raise ValueError(f"{path}: must start with '# MUTANT: ...' and '# EXPECT: ...' lines")
    lab, exercise = path.parent.name, path.stem.split("__")[0]
    source = patch(solution_cell(lab, exercise), text[match.end():].split("\n"), path)
    return lab, exercise, match["what"].strip(), match["expect"].strip(), bool(match["fast"]), source


def patch(old, diff, where):
    """``old`` with the unified ``diff`` (a list of lines) applied; its context must match."""
    old_lines, out, pos = old.rstrip("\n").split("\n"), [], 0
    starts = [i for i, line in enumerate(diff) if line.startswith("@@")]
    if not starts:
        raise ValueError(f"{where}: no '@@' hunk: the body must be a unified diff")
    for k, i in enumerate(starts):
        hunk = HUNK.match(diff[i])
        start = int(hunk[1]) - (hunk[2] != "0")  # a hunk that only adds counts from line 0
        out += old_lines[pos:start]
        pos = start
        for line in diff[i + 1:starts[k + 1] if k + 1 < len(starts) else len(diff)]:
            tag, text = line[:1], line[1:]
            if not tag:  # the end of the file (an empty source line is " ", not "")
                continue
            if tag in " -" and (pos >= len(old_lines) or old_lines[pos] != text):
                raise ValueError(f"{where}: does not apply to the solution at its line {pos + 1}: "
                                 f"expected {text!r} (the solution changed: update the mutant)")
            if tag in " +":
                out.append(text)
            pos += tag in " -"
    return "\n".join(out + old_lines[pos:])


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
        params.append(pytest.param(rel, id=rel[:-len(".diff")], marks=[] if path in fast else [pytest.mark.slow]))
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
    """Headers, a known exercise, a diff that applies, a cell that compiles, unlike the solution."""
    assert mutant_files(), f"no mutants under {MUTANTS}"
    assert not list(MUTANTS.glob("*/*.py")), "mutants are .diff files now (see the docstring)"
    for path in mutant_files():
        lab, exercise, _, expect, _, source = parse(path)  # raises if the diff does not apply
        assert expect, f"{path}: EXPECT is empty"
        assert exercise in load_plan(lab).exercises, f"{path}: {lab} has no exercise {exercise}"
        compile(notebook.clean_cell(source), str(path), "exec")  # as the grader reads the cell
        assert source.strip() != solution_cell(lab, exercise).strip(), f"{path}: is the solution"


def test_every_exercise_has_enough_mutants():
    """Each graded exercise of a lab with a mutants folder has at least five wrong answers."""
    for folder in sorted({p.parent for p in mutant_files()}):
        counts = {name: 0 for name in load_plan(folder.name).exercises}
        for path in folder.glob("*__*.diff"):
            counts[path.stem.split("__")[0]] = counts.get(path.stem.split("__")[0], 0) + 1
        short = {name: n for name, n in counts.items() if n < MIN_PER_EXERCISE}
        assert not short, f"{folder.name}: exercises with fewer than {MIN_PER_EXERCISE} mutants: {short}"
