"""Helpers for the grader's own tests: paths, hashing, time bounds, and submissions built from a
solution with one answer cell replaced (what a grading left running: ``leftovers``, in
tests/conftest.py)."""
import hashlib
import json
import os
from pathlib import Path

from dlhack.grade import notebook
from tests.support import ROOT

PLANTED = Path(__file__).with_name("submissions") / "02_collectives"
SOLUTION = ROOT / "solutions" / "02_collectives.ipynb"
LAB = ROOT / "labs" / "02_collectives.ipynb"


def sha256(path):
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()


def tree_hashes(folder):
    return {p.relative_to(folder).as_posix(): sha256(p) for p in sorted(Path(folder).rglob("*"))
            if p.is_file() and "__pycache__" not in p.parts}


def time_bound(seconds):
    """``seconds``, stretched when other jobs oversubscribe the machine (a shared workstation).

    Grading 4 ranks on 2 cores loads the machine by about 4 on its own, so only a 1-minute load
    above twice the core count stretches the bound: in CI, which runs one test at a time, it holds
    as written.
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
