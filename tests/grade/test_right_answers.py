"""Right answers written otherwise than the solution score full marks: the checks are strict
about what the exercise asks and permissive about the rest (lab 02's ring: any chunk indexing,
chunk boundaries, pickled or buffer messages, Send/Recv or Sendrecv).

``tests/grade/right_answers/<lab>/<EXERCISE>__<name>.body`` holds the body of the answer cell
between its ``### BEGIN SOLUTION`` and ``### END SOLUTION`` lines, indented as in the function;
the rest of the cell (imports, signature, docstring) is the solution's. Each is graded as
tests/grade/test_mutants.py grades a mutant (slow: one graded run per rank count).
"""
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from dlhack.grade.plan import load_plan
from dlhack.grade.schedule import Slots, grade
from tests.grade.gradetools import solution_cell, solution_notebook, with_cell
from tests.grade.test_mutants import messages

ANSWERS = Path(__file__).with_name("right_answers")
BEGIN, END = "    ### BEGIN SOLUTION", "    ### END SOLUTION"


def answer_files():
    return sorted(ANSWERS.glob("*/*__*.body"))


def cell(path):
    """``(lab, exercise, source)``: the solution's cell with the file's body in place of its own."""
    lab, exercise = path.parent.name, path.stem.split("__")[0]
    old = solution_cell(lab, exercise).rstrip("\n").split("\n")
    body = path.read_text(encoding="utf-8").rstrip("\n").split("\n")
    return lab, exercise, "\n".join(old[:old.index(BEGIN) + 1] + body + old[old.index(END):])


@pytest.fixture(scope="module")
def graded():
    slots = Slots(None)

    def one(path):
        lab, exercise, source = cell(path)
        submission = with_cell(solution_notebook(lab), exercise, source)
        return path.name, grade(load_plan(lab), submission, exercises=[exercise], slots=slots)

    with ThreadPoolExecutor(max_workers=max(1, len(answer_files()))) as pool:
        return dict(pool.map(one, answer_files()))


@pytest.mark.slow
@pytest.mark.parametrize("path", answer_files(), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_right_answer_scores_full_marks(path, graded):
    result = graded[path.name]
    assert result["status"] == "graded", f"{path.name}: {result['status']}: {result['message']}"
    ex = result["exercises"][0]
    assert ex["score"] == ex["max_score"], (
        f"{path.name}, a right answer, scores {ex['score']} / {ex['max_score']}: "
        f"{messages(ex)[:2]}")


def test_right_answers_are_not_the_solution():
    assert answer_files(), f"no right answers under {ANSWERS}"
    for path in answer_files():
        lab, exercise, source = cell(path)
        compile(source, str(path), "exec")
        assert source.strip() != solution_cell(lab, exercise).strip(), f"{path}: is the solution"
