"""Before a notebook is read for its answers (dlhack.grade.intake): a notebook the grader cannot
grade gets a clear reason (the old format 3, another language's kernel), and a lab that its
name and its metadata disagree on is named in a warning."""
import pytest

from dlhack.grade import grade_notebook
from dlhack.grade.report import feedback
from tests.grade.gradetools import PLANTED, flat

NAIVE = ["allreduce_naive"]


@pytest.mark.parametrize(("name", "phrase"), [
    ("nbformat3", "in the old format 3 (before 2015), which the grader does not read"),
    ("r_kernel", "is a notebook for r (kernel ir), but the labs are graded as Python")])
def test_a_notebook_it_cannot_grade_gets_a_clear_reason(name, phrase):
    result = grade_notebook(PLANTED / f"{name}.ipynb")
    assert result["status"] == "invalid" and phrase in result["message"], result["message"]


def test_a_lab_that_name_and_metadata_disagree_on_is_named_in_a_warning(workdir):
    result = grade_notebook(PLANTED / "lab_mismatch.ipynb", exercises=NAIVE, workdir=workdir)
    assert (result["lab"], result["score"]) == ("02_collectives", 3), feedback(result)
    assert ("which lab is lab_mismatch.ipynb? its metadata says 05_large_batch and its name says "
            "02_collectives: graded as 02_collectives, from its name") in flat(result)
