"""Helpers for the grader's own tests: paths, hashing, time bounds, and submissions built from a
solution with one answer cell replaced (what a grading left running: ``leftovers``, in
tests/conftest.py)."""
import hashlib
import json
import os
from pathlib import Path

from dlhack.grade import notebook
from dlhack.grade.report import feedback
from tests.support import ROOT

PLANTED = Path(__file__).with_name("submissions") / "02_collectives"
SOLUTION = ROOT / "solutions" / "02_collectives.ipynb"
LAB = ROOT / "labs" / "02_collectives.ipynb"


def flat(result):
    """The feedback on ``result``, its whitespace collapsed: a phrase reads the same across lines."""
    return " ".join(feedback(result).split())


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_hashes(folder):
    return {p.relative_to(folder).as_posix(): sha256(p) for p in sorted(Path(folder).rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def time_bound(seconds):
    """``seconds``, stretched when other jobs oversubscribe the machine (a shared workstation).

    Grading 4 ranks on 2 cores loads the machine by about 4 on its own, so only a 1-minute load
    above twice the core count stretches the bound. ``make test`` runs two test files at a time
    (pytest-xdist), so in CI too the other file's jobs may stretch it; a bound taken at a test's
    start cannot see the load its own run brings, so take it again at the end.
    """
    cores = os.cpu_count() or 1
    return seconds * max(1.0, os.getloadavg()[0] / (2 * cores))


def solution_notebook(lab):
    return json.loads((ROOT / "solutions" / f"{lab}.ipynb").read_text(encoding="utf-8"))


def solution_cell(lab, exercise):
    """The source of the solution's answer cell with grade_id ``exercise``."""
    for cell in solution_notebook(lab)["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if cell["cell_type"] == "code" and meta.get("solution") and meta.get("grade_id") == exercise:
            return "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
    raise ValueError(f"solutions/{lab}.ipynb has no answer cell with grade_id {exercise!r}")


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


# A result made by hand, as schedule.grade returns it (no MPI needed): report.py and
# classreport.py are tested on it.
RUN_OK = {"ranks": 2, "outcome": "passed", "message": "", "duration_s": 0.5}
RUN_BAD = {"ranks": 3, "outcome": "failed", "message": "rank 1: wrong", "duration_s": 0.7,
           "log": "L"}
RESULT = {
    "lab": "02_collectives", "submission": "x/tanaka.ipynb", "status": "graded", "message": "",
    "score": 2.0, "max_score": 3.0, "duration_s": 1.5, "warnings": ["cell 'a' was left out"],
    "exercises": [{"name": "allreduce_ring", "score": 2.0, "max_score": 3.0, "status": "partial",
                   "tests": [
                       {"name": "test_a", "points": 2.0, "score": 2.0, "outcome": "passed",
                        "message": "", "runs": [RUN_OK]},
                       {"name": "test_b", "points": 1.0, "score": 0.0, "outcome": "failed",
                        "message": "at 3 ranks: rank 1: wrong", "runs": [RUN_OK, RUN_BAD]}]}],
}
