"""Grading one submission end to end (dlhack.grade.schedule): the solution earns every point,
the lab none (not yet done), and a process a rank detached is killed too. How long grading takes
is measured by ``dlhack bench grade``, not asserted here (a wall-clock bound fails on a loaded
machine)."""

from dlhack.grade import grade, grade_notebook, notebook
from dlhack.grade.plan import load_plan
from dlhack.grade.report import feedback
from tests.grade.gradetools import LAB, SOLUTION, sha256


def test_solution_scores_full_marks(workdir):
    before = sha256(SOLUTION)
    result = grade_notebook(SOLUTION, workdir=workdir)
    verdict = (result["status"], result["score"], result["max_score"])
    assert verdict == ("graded", 10, 10), feedback(result)
    assert all(run["outcome"] == "passed" for ex in result["exercises"] for t in ex["tests"]
               for run in t["runs"])
    assert sha256(SOLUTION) == before


def test_lab_scores_zero_as_not_yet_done(workdir):
    result = grade_notebook(LAB, workdir=workdir)
    assert (result["status"], result["score"], result["max_score"]) == ("graded", 0, 10)
    assert [ex["status"] for ex in result["exercises"]] == ["not_done"] * 3
    assert "not yet done: allreduce_ring still raises NotImplementedError" in feedback(result)


def test_a_detached_child_of_a_rank_is_killed_too(workdir):
    """A process that leaves its rank's session is found by its working directory."""
    sub, _ = notebook.from_notebook(SOLUTION)
    text = sub.text + ("\nimport subprocess\n"
                       "subprocess.Popen(['sleep', '300'], start_new_session=True)\n")
    result = grade(load_plan("02_collectives"), notebook.Submission(text=text, spans=sub.spans),
                   exercises=["allreduce_naive"], workdir=workdir)
    assert result["score"] == 3, feedback(result)  # and the fixture finds no sleep left
