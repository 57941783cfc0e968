"""The class report for mentors (dlhack.grade.classreport): a row per learner, and per test how
many fail it and what it most often says, as CSV and as a small HTML page."""
from dlhack.grade import classreport
from tests.grade.gradetools import RESULT


def test_the_class_report_has_a_row_per_learner_and_counts_failures_per_test(tmp_path):
    other = {**RESULT, "submission": "x/sato.ipynb", "score": 3.0, "exercises": [
        {**RESULT["exercises"][0], "score": 3.0, "tests": [
            {**RESULT["exercises"][0]["tests"][1], "outcome": "passed", "message": ""}]}]}
    results = [other, RESULT]
    classreport.write_csv(tmp_path / "c.csv", results)
    assert (tmp_path / "c.csv").read_text().splitlines() == [
        "learner,lab,status,score,max_score,allreduce_ring",
        "sato,02_collectives,graded,3,3,3/3", "tanaka,02_collectives,graded,2,3,2/3"]
    counts = {(ex, name): (bad, total, msg) for ex, name, bad, total, msg
              in classreport.tests(results)}
    assert counts[("allreduce_ring", "test_b")] == (1, 2, "at 3 ranks: rank 1: wrong")
    page = classreport.html_text([{**RESULT, "submission": "<b>.ipynb"}])
    assert "<td>&lt;b&gt;</td>" in page and "<td>1 / 1</td>" in page
