"""Has a submission changed what the learner may not change? Its nbgrader cells, against the lab's.

    found = compare(submitted_nb, lab_nb)   # [{"cell": grade_id, "kind": ..., "message": ...}]
    annotate(result, path, lab)             # result["tampering"], and a warning for each

A lab marks with nbgrader metadata (``grade_id``, ``locked``, ``grade``, ``solution``,
``points``) the cells that grading rests on: its check cells (graded, locked, with their
points) and its answer cells (``solution``: the code is the learner's, the cell is not). A
submission whose locked cell has other code, whose graded cell has other points, or that
deleted, duplicated or re-labelled such a cell, is named here: in the JSON result, the text
feedback and the class report. It costs reading two notebooks.

The score does not change: it comes from the grader's own tests (graded/), which no cell of the
notebook can alter. A warning is for the instructor, who may want a word with the learner, and
for nbgrader, whose own marks read these cells: a check cell replaced by ``pass`` would score
full marks there (``nbgrader autograde`` restores locked cells from its own copy of the lab, but
only after ``nbgrader generate_assignment`` put that copy in its gradebook).
"""
import json
from pathlib import Path

from dlhack.grade.plan import repo_root

FLAGS = ("locked", "grade", "solution")


def _source(cell):
    text = cell.get("source") or ""
    text = "".join(text) if isinstance(text, list) else str(text)
    return "\n".join(line.rstrip() for line in text.strip().splitlines())


def _meta(cell):
    meta = (cell.get("metadata") or {}).get("nbgrader") if isinstance(cell, dict) else None
    return meta if isinstance(meta, dict) and meta.get("grade_id") else None


def marked(nb):
    """``{grade_id: [cell, ...]}`` for the cells with nbgrader metadata, in notebook order."""
    cells = {}
    for cell in nb.get("cells") or []:
        meta = _meta(cell)
        if meta:
            cells.setdefault(str(meta["grade_id"]), []).append(cell)
    return cells


def _emptied(source):
    code = [line for line in source.splitlines() if line.strip() and not line.lstrip().startswith("#")]
    return code in ([], ["pass"])


def _flags(cell):
    return tuple(bool(_meta(cell).get(f)) for f in FLAGS)


def _one(name, ours, theirs):
    """What differs in one cell the lab has and the submission kept: kind and message, or None."""
    mine, yours = _meta(ours), _meta(theirs)
    locked = mine.get("locked") or (mine.get("grade") and not mine.get("solution"))
    if locked and _source(theirs) != _source(ours):
        if _emptied(_source(theirs)):
            return "emptied", f"locked cell '{name}' was emptied (replaced by `pass`)"
        return "changed", f"locked cell '{name}' was edited: its code is not the lab's"
    if mine.get("grade") and yours.get("points") != mine.get("points"):
        return "points", (f"graded cell '{name}' is worth {yours.get('points')} points in the "
                          f"submission, {mine.get('points')} in the lab")
    flags = [f for f in FLAGS if bool(yours.get(f)) != bool(mine.get(f))]
    if flags:
        return "metadata", (f"cell '{name}' had its nbgrader marks changed ("
                            + ", ".join(f"{f}: {bool(mine.get(f))} -> {bool(yours.get(f))}"
                                        for f in flags) + ")")
    return None


def compare(submitted, lab):
    """The differences in nbgrader cells between a submitted notebook and the lab's own."""
    ours, theirs = marked(lab), marked(submitted)
    found = []

    def note(name, kind, message):
        found.append({"cell": name, "kind": kind, "message": message})

    missing = [n for n in ours if n not in theirs]
    extra = [n for n in theirs if n not in ours]
    for name, cells in ours.items():
        if name not in theirs:
            continue
        if len(theirs[name]) > 1:
            note(name, "duplicated", f"cell '{name}' appears {len(theirs[name])} times")
        diff = _one(name, cells[0], theirs[name][0])
        if diff:
            note(name, *diff)
    for name in list(missing):
        # The lab's cell under another name (a grade_id changed): the same code, else (an answer
        # cell, whose code is the learner's) the same nbgrader marks.
        same = ([x for x in extra if _source(theirs[x][0]) == _source(ours[name][0])]
                or [x for x in extra if _flags(theirs[x][0]) == _flags(ours[name][0])])
        if same:
            note(name, "grade_id", f"cell '{name}' was re-labelled '{same[0]}' (its grade_id)")
            missing.remove(name)
            extra.remove(same[0])
    for name in missing:
        note(name, "deleted", f"cell '{name}' of the lab was deleted")
    for name in extra:
        note(name, "added", f"cell '{name}' is marked for nbgrader but is not in the lab")
    return found


def lab_notebook(lab, root=None):
    """The lab as handed out (``labs/LAB.ipynb``), or None when it is not there."""
    path = Path(root or repo_root()) / "labs" / f"{lab}.ipynb"
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def annotate(result, path, root=None):
    """Add ``tampering`` (a list, empty when none) and a warning per finding to ``result``."""
    lab = lab_notebook(result.get("lab"), root) if result.get("lab") else None
    try:
        submitted = json.loads(Path(path).read_bytes())
    except (OSError, ValueError):
        submitted = None
    found = compare(submitted, lab) if isinstance(submitted, dict) and lab else []
    result["tampering"] = found
    result["warnings"] = list(result.get("warnings", [])) + [
        f"tampering: {f['message']} (the score comes from the grader's own tests and stands)"
        for f in found]
    return result
