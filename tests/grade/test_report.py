"""Feedback text, JSON and JUnit from a result dict (no MPI needed)."""
import json
import xml.etree.ElementTree as ET

from dlhack.grade import report

RUN_OK = {"ranks": 2, "outcome": "passed", "message": "", "duration_s": 0.5}
RUN_BAD = {"ranks": 3, "outcome": "failed", "message": "rank 1: wrong", "duration_s": 0.7,
           "log": "L"}
RESULT = {
    "lab": "02_collectives", "submission": "x/tanaka.ipynb", "status": "graded", "message": "",
    "score": 2.0, "max_score": 3.0, "duration_s": 1.5, "warnings": ["cell 'a' was left out"],
    "exercises": [{"name": "allreduce_ring", "score": 2.0, "max_score": 3.0, "status": "partial",
                   "tests": [
                       {"name": "test_a", "points": 2.0, "score": 2.0, "outcome": "passed",
                        "message": "", "runs": [RUN_OK]},
                       {"name": "test_b", "points": 1.0, "score": 0.0, "outcome": "failed",
                        "message": "at 3 ranks: rank 1: wrong", "runs": [RUN_OK, RUN_BAD]}]}],
}


def test_feedback_gives_score_each_test_and_what_to_look_at():
    text = report.feedback(RESULT)
    assert text.splitlines()[0].startswith("02_collectives: 2 / 3 points  (tanaka.ipynb")
    assert "[pass] test_a (2 pt, ranks 2)" in text and "[FAIL] test_b (1 pt, ranks 2 3)" in text
    assert "at 3 ranks: rank 1: wrong" in text and "! cell 'a' was left out" in text


def test_junit_has_one_testcase_per_run():
    root = ET.fromstring(report.junit([RESULT]).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures")) == ("3", "1")
    failure = suite.find("testcase[@name='test_b[3 ranks]']/failure")
    assert failure.get("message") == "rank 1: wrong" and failure.text == "L"


def test_json_is_written_atomically(tmp_path):
    path = tmp_path / "deep" / "r.json"
    report.write_json(path, {"a": 1})
    report.write_json(path, RESULT)
    assert json.loads(path.read_text())["score"] == 2.0
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_the_class_report_has_a_row_per_learner_and_counts_failures_per_test(tmp_path):
    from dlhack.grade import classreport

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
