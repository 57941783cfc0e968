"""The labs that grade whole scripts (``%%writefile`` answer cells run under mpiexec by their
tests): 03_convert (convert the translator to ChainerMN) and 06_slower (make a slow parallel run
fast). Each solution scores full marks; each generated lab scores 0, as not yet done.

Grading one of these runs a dozen small training jobs at 1 to 3 ranks: about a minute on two
cores, so they are marked slow. Their wrong answers are in tests/grade/mutants/.
"""
import pytest

from dlhack.grade import grade_notebook
from dlhack.grade.report import feedback
from tests.support import ROOT

LABS = [pytest.param(name, marks=pytest.mark.slow) for name in ("03_convert", "06_slower")
        if (ROOT / "solutions" / f"{name}.ipynb").exists()]


@pytest.mark.parametrize("lab", LABS)
def test_solution_scores_full_marks(lab, workdir):
    result = grade_notebook(ROOT / "solutions" / f"{lab}.ipynb", workdir=workdir)
    assert result["status"] == "graded", feedback(result)
    assert result["score"] == result["max_score"] > 0, feedback(result)


@pytest.mark.parametrize("lab", LABS)
def test_lab_scores_zero_as_not_yet_done(lab, workdir):
    result = grade_notebook(ROOT / "labs" / f"{lab}.ipynb", workdir=workdir)
    assert (result["status"], result["score"]) == ("graded", 0), feedback(result)
    assert all(ex["status"] == "not_done" for ex in result["exercises"]), feedback(result)
    assert "still raises NotImplementedError" in feedback(result)
