"""Tampering named (dlhack.grade.tampering): every way a submission can change the lab's nbgrader
cells is found and worded, a clean notebook gives nothing, and through ``dlhack grade`` the
warning reaches the JSON, the text, the CSV and the HTML while the score stays the tests'."""
import copy
import csv
import json

import pytest

from dlhack.grade import tampering
from dlhack.grade.cli import main
from tests.grade.gradetools import LAB, SOLUTION

CHECK = "check_allreduce_naive"   # a graded, locked check cell (3 points)
ANSWER = "allreduce_naive"        # an answer cell (solution)


def cells(nb, grade_id):
    return [c for c in nb["cells"]
            if c.get("metadata", {}).get("nbgrader", {}).get("grade_id") == grade_id]


def meta(cell):
    return cell["metadata"]["nbgrader"]


def edit_source(nb):
    cells(nb, CHECK)[0]["source"] = 'print("all good")\n'


def empty(nb):
    cells(nb, CHECK)[0]["source"] = "pass"


def more_points(nb):
    meta(cells(nb, CHECK)[0])["points"] = 30


def relabel_check(nb):
    meta(cells(nb, CHECK)[0])["grade_id"] = "mine"


def relabel_answer(nb):
    meta(cells(nb, ANSWER)[0])["grade_id"] = "my_answer"


def delete(nb):
    nb["cells"].remove(cells(nb, CHECK)[0])


def duplicate(nb):
    index = nb["cells"].index(cells(nb, CHECK)[0])
    nb["cells"].insert(index, copy.deepcopy(nb["cells"][index]))


def unlock(nb):
    meta(cells(nb, CHECK)[0])["locked"] = False


def add(nb):
    nb["cells"].append({**copy.deepcopy(cells(nb, CHECK)[0]), "source": "1"})
    meta(nb["cells"][-1])["grade_id"] = "extra"


KINDS = [  # (edit, kind, cell, words in the message)
    (edit_source, "changed", CHECK, "was edited"),
    (empty, "emptied", CHECK, "replaced by `pass`"),
    (more_points, "points", CHECK, "worth 30 points in the submission, 3 in the lab"),
    (relabel_check, "grade_id", CHECK, "re-labelled 'mine'"),
    (relabel_answer, "grade_id", ANSWER, "re-labelled 'my_answer'"),
    (delete, "deleted", CHECK, "was deleted"),
    (duplicate, "duplicated", CHECK, "appears 2 times"),
    (unlock, "metadata", CHECK, "locked: True -> False"),
    (add, "added", "extra", "not in the lab"),
]


def lab():
    return json.loads(LAB.read_text())


def test_the_lab_and_its_solution_are_clean():
    assert tampering.compare(lab(), lab()) == []
    assert tampering.compare(json.loads(SOLUTION.read_text()), lab()) == []


@pytest.mark.parametrize(("edit", "kind", "cell", "words"), KINDS,
                         ids=[k[0].__name__ for k in KINDS])
def test_each_kind_of_tampering_is_named(edit, kind, cell, words):
    nb = lab()
    edit(nb)
    found = tampering.compare(nb, lab())
    assert [(f["kind"], f["cell"]) for f in found] == [(kind, cell)], found
    assert words in found[0]["message"]


def test_an_answer_cell_is_the_learners_to_write():
    nb = lab()
    cells(nb, ANSWER)[0]["source"] = "def allreduce_naive(comm, x):\n    return x\n"
    assert tampering.compare(nb, lab()) == []


def test_a_tampered_submission_is_named_everywhere_and_keeps_its_score(tmp_path, capsys):
    nb = json.loads(SOLUTION.read_text())
    empty(nb)
    more_points(nb)
    path = tmp_path / "02_collectives-tanaka.ipynb"
    path.write_text(json.dumps(nb))
    out = tmp_path / "out"
    assert main([str(path), "-e", ANSWER, "--json", str(out / "r.json"),
                 "--csv", str(out / "c.csv"), "--html", str(out / "c.html")]) == 0
    text = capsys.readouterr().out
    result = json.loads((out / "r.json").read_text())["submissions"][0]
    naive = {ex["name"]: ex for ex in result["exercises"]}[ANSWER]
    assert (naive["score"], naive["max_score"]) == (3, 3)  # what the graded tests give
    assert [f["kind"] for f in result["tampering"]] == ["emptied"]
    assert "tampering: locked cell 'check_allreduce_naive' was emptied" in " ".join(text.split())
    with open(out / "c.csv") as f:
        assert next(csv.DictReader(f))["tampered_cells"] == "1"
    assert "was emptied" in (out / "c.html").read_text()
