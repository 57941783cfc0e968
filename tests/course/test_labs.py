"""The committed labs and solutions as a learner gets them: stubs that keep signature and
docstring, check cells worth what the graded tests are worth, totals stated at the top, the
project's kernel, and no MPI run without a timeout. (That labs/ is generated from solutions/ and
current is tests/grade/test_labs.py's.)"""
import json
import re

import pytest

from dlhack.grade.plan import lab_names, load_plan
from tests.support import ROOT

LABS = [name for name in lab_names() if (ROOT / "solutions" / f"{name}.ipynb").exists()]


def notebook(folder, lab):
    return json.loads((ROOT / folder / f"{lab}.ipynb").read_text(encoding="utf-8"))


def cells(folder, lab):
    return notebook(folder, lab)["cells"]


def nbgrader(cell):
    return cell.get("metadata", {}).get("nbgrader", {})


@pytest.mark.parametrize("lab", LABS)
def test_stubs_keep_signature_and_docstring_and_nothing_else(lab):
    answers = [c for c in cells("labs", lab) if nbgrader(c).get("solution")]
    assert sorted(nbgrader(c)["grade_id"] for c in answers) == sorted(load_plan(lab).exercises)
    for cell in answers:
        text = "".join(cell["source"])
        name = nbgrader(cell)["grade_id"]
        assert "raise NotImplementedError()" in text and "SOLUTION" not in text, f"{lab}: {name}"
        if text.startswith("%%writefile"):
            continue  # a whole script as the answer (a lab's %%writefile cell), no function
        assert re.search(r"^(def|class) \w+\(", text, re.MULTILINE), f"{lab}: {name} lost its def"
        assert '    """' in text, f"{lab}: the stub of {name} lost its docstring"
        assert "    raise NotImplementedError()" in text, f"{lab}: {name}"
    assert all(not c.get("outputs") and c.get("execution_count") is None
               for c in cells("labs", lab) if c["cell_type"] == "code")


@pytest.mark.parametrize("lab", LABS)
def test_check_cells_are_worth_what_their_tests_are_worth(lab):
    plan = load_plan(lab)
    checks = {nbgrader(c)["grade_id"]: c for c in cells("solutions", lab) if nbgrader(c).get("grade")}
    assert sorted(checks) == sorted(f"check_{name}" for name in plan.exercises)
    for name in plan.exercises:
        meta = nbgrader(checks[f"check_{name}"])
        cell = checks[f"check_{name}"]
        assert meta["locked"] and meta["points"] == plan.points(name), (lab, name)
        assert "".join(cell["source"]) == f'dlhack.grade.check("{lab}", "{name}")'


@pytest.mark.parametrize("lab", LABS)
def test_the_total_stated_at_the_top_is_the_plans(lab):
    """The first cell says "**N points**" and its table's total row says N, the graded total."""
    top = "".join(cells("solutions", lab)[0]["source"])
    total = load_plan(lab).points()
    stated = re.search(r"\*\*(\d+) points\*\*", top)
    assert stated and float(stated[1]) == total, f"{lab}: the top says {stated and stated[0]}, the plan {total}"
    row = re.search(r"^\|[^\n]*total[^\n]*\|\s*(\d+)\s*\|\s*$", top, re.MULTILINE)
    assert row and float(row[1]) == total, f"{lab}: the table's total row does not say {total}"
    rows = re.findall(r"^\| \d+ \|.*\|\s*(\d+)\s*\|\s*$", top, re.MULTILINE)
    assert sum(map(float, rows)) == total, f"{lab}: the table's exercise points {rows} do not add up"


@pytest.mark.parametrize("lab", LABS)
def test_project_kernel_and_mpi_runs_with_a_timeout(lab):
    nb = notebook("solutions", lab)
    assert nb["metadata"]["kernelspec"]["name"] == "dlhack", lab
    assert nb["metadata"]["kernelspec"]["display_name"] == "Python (dlhack)", lab
    for cell in nb["cells"]:
        text = "".join(cell["source"])
        if cell["cell_type"] != "code" or text.startswith("%%writefile"):
            continue
        for line in text.splitlines():
            if line.lstrip().startswith("!") and "mpiexec" in line:
                assert "timeout" in line, f"{lab}: an MPI run without a timeout: {line}"
            if line.lstrip().startswith("!") and "dlhack run" in line:
                assert "--timeout" in line, f"{lab}: `dlhack run` without --timeout: {line}"
