"""labs/ is generated from solutions/: current, stubs that keep signature and docstring, and
check cells worth what the graded tests are worth."""
import json
import shutil

from gradetools import LAB, ROOT, SOLUTION

from dlhack.grade import labs
from dlhack.grade.plan import load_plan


def test_committed_labs_are_up_to_date_with_solutions(capsys):
    assert labs.main(["check"]) == 0, capsys.readouterr().out


def test_check_names_a_stale_or_missing_lab(tmp_path, capsys):
    for folder in ("solutions", "labs"):
        (tmp_path / folder).mkdir()
    shutil.copy(SOLUTION, tmp_path / "solutions")
    assert labs.main(["check", "--root", str(tmp_path)]) == 1
    assert "02_collectives.ipynb: missing" in capsys.readouterr().out
    assert labs.main(["generate", "--root", str(tmp_path)]) == 0
    assert labs.main(["check", "--root", str(tmp_path)]) == 0
    solution = tmp_path / "solutions" / "02_collectives.ipynb"
    solution.write_text(solution.read_text().replace("Lab 2", "Lab two"))
    capsys.readouterr()
    assert labs.main(["check", "--root", str(tmp_path)]) == 1
    assert "02_collectives.ipynb: stale" in capsys.readouterr().out


def cells(path):
    return json.loads(path.read_text())["cells"]


def test_stubs_keep_signature_and_docstring_and_nothing_else():
    answers = [c for c in cells(LAB) if c["metadata"].get("nbgrader", {}).get("solution")]
    assert len(answers) == 3
    for cell in answers:
        text = "".join(cell["source"])
        name = cell["metadata"]["nbgrader"]["grade_id"]
        assert f"def {name}(comm, " in text and '    """' in text and "Returns:" in text
        assert text.rstrip().endswith("    raise NotImplementedError()")
        assert "SOLUTION" not in text
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in cells(LAB) if c["cell_type"] == "code")


def test_check_cells_are_worth_what_their_tests_are_worth():
    plan = load_plan("02_collectives")
    checks = [c for c in cells(SOLUTION) if c["metadata"].get("nbgrader", {}).get("grade")]
    assert [c["metadata"]["nbgrader"]["grade_id"] for c in checks] == [
        f"check_{name}" for name in plan.exercises]
    for cell, name in zip(checks, plan.exercises):
        meta = cell["metadata"]["nbgrader"]
        assert meta["locked"] and meta["points"] == plan.points(name)
        assert "".join(cell["source"]) == f'dlhack.grade.check("02_collectives", "{name}")'
    assert ROOT.joinpath("labs", "02_collectives.ipynb").exists()
