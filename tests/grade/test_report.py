"""Feedback text, JSON and JUnit from a result dict (no MPI needed)."""
import json
import xml.etree.ElementTree as ET

from dlhack.grade import report
from tests.grade.gradetools import RESULT


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
