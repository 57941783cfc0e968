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
        "student_id,lab,status,score,max_score,submitted_at,late,tampered_cells,allreduce_ring",
        "sato,02_collectives,graded,3,3,,,0,3", "tanaka,02_collectives,graded,2,3,,,0,2"]
    counts = {(ex, name): (bad, total, msg) for ex, name, bad, total, msg
              in classreport.tests(results)}
    assert counts[("allreduce_ring", "test_b")] == (1, 2, "at 3 ranks: rank 1: wrong")
    page = classreport.html_text([{**RESULT, "submission": "<b>.ipynb"}])
    assert "<td>&lt;b&gt;</td>" in page and "<td>1 / 1</td>" in page


def test_the_student_id_comes_from_the_result_never_the_file_name(tmp_path):
    """Forty learners' 02_collectives.ipynb are forty rows, keyed by who handed each in."""
    same = "submitted/{}/02_collectives/02_collectives.ipynb"
    results = [{**RESULT, "submission": same.format(s), "student": s, "score": score,
                "submitted_at": "2026-12-02T00:55:01+00:00", "late": late,
                "tampering": [{"cell": "c", "kind": "changed", "message": "m"}] * cells}
               for s, score, late, cells in (("bob", 0.0, True, 2), ("alice", 2.0, False, 0))]
    header, rows = classreport.table(results)
    assert header[:8] == ["student_id", "lab", "status", "score", "max_score", "submitted_at",
                          "late", "tampered_cells"]
    assert [row[:8] for row in rows] == [
        ["alice", "02_collectives", "graded", "2", "3", "2026-12-02T00:55:01+00:00", 0, 0],
        ["bob", "02_collectives", "graded", "0", "3", "2026-12-02T00:55:01+00:00", 1, 2]]
    assert all(float(row[-1]) >= 0 for row in rows)  # every exercise cell a plain number
    page = classreport.html_text(results)
    assert "allreduce_ring (of 3)" in page and "Tampering" in page and "<td>bob</td><td>m</td>" in page


def test_the_nbgrader_csv_has_the_columns_nbgrader_export_writes():
    results = [{**RESULT, "student": "alice", "submitted_at": "2026-12-02T09:55:01+09:00"}]
    lines = classreport.nbgrader_csv(results).splitlines()
    assert lines == [
        ("assignment,duedate,timestamp,student_id,last_name,first_name,email,raw_score,"
         "late_submission_penalty,score,max_score"),
        "02_collectives,None,2026-12-02 00:55:01,alice,None,None,None,2.0,0.0,2.0,3.0"]
