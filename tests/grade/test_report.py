"""Feedback text, JSON and JUnit from a result dict (no MPI needed)."""
import json
import xml.etree.ElementTree as ET
from datetime import datetime

import pytest

from dlhack.grade import report
from tests.grade.gradetools import RESULT, RUN_BAD


def test_feedback_gives_score_each_test_and_what_to_look_at():
    text = report.feedback(RESULT)
    assert text.splitlines()[0].startswith("02_collectives: 2 / 3 points  (tanaka.ipynb")
    assert "[pass] test_a (2 pt, ranks 2)" in text and "[FAIL] test_b (1 pt, ranks 2 3)" in text
    assert "at 3 ranks: rank 1: wrong" in text and "! cell 'a' was left out" in text


def test_junit_has_one_testcase_per_run_with_time_and_timestamp():
    result = {**RESULT, "graded_at": "2026-12-02T00:55:01+00:00"}
    root = ET.fromstring(report.junit([result]).split("\n", 1)[1])
    suite = root.find("testsuite")
    assert (suite.get("tests"), suite.get("failures"), suite.get("errors")) == ("3", "1", "0")
    assert suite.get("time") == "1.5"
    assert datetime.fromisoformat(suite.get("timestamp")) == datetime.fromisoformat(
        result["graded_at"])
    failure = suite.find("testcase[@name='test_b[3 ranks]']/failure")
    assert failure.get("message") == "rank 1: wrong" and failure.text == "L"


@pytest.mark.parametrize(("outcome", "kind"), [
    ("failed", "failure"), ("not_done", "failure"), ("crashed", "error"), ("hung", "error"),
    ("tampered", "error"), ("error", "error")])
def test_junit_tells_a_wrong_answer_from_a_run_that_gave_none(outcome, kind):
    """As pytest writes it: a <failure> is a wrong answer, an <error> a run without one."""
    ex = RESULT["exercises"][0]
    bad = {**RUN_BAD, "outcome": outcome}
    result = {**RESULT, "exercises": [{**ex, "tests": [{**ex["tests"][1], "runs": [bad]}]}]}
    suite = ET.fromstring(report.junit([result]).split("\n", 1)[1]).find("testsuite")
    assert [child.tag for child in suite.find("testcase")] == [kind]
    assert suite.get(f"{kind}s") == "1" and suite.get(
        {"failure": "errors", "error": "failures"}[kind]) == "0"
    assert suite.find(f"testcase/{kind}").get("type") == outcome


def test_json_has_one_shape_with_a_schema_and_is_written_atomically(tmp_path):
    path = tmp_path / "deep" / "r.json"
    report.write_json(path, [{"a": 1}])
    report.write_json(path, [RESULT])
    doc = json.loads(path.read_text())
    assert doc["schema"] == report.SCHEMA == "dlhack-grade/1"
    assert [r["score"] for r in doc["submissions"]] == [2.0]
    assert [p.name for p in path.parent.iterdir()] == ["r.json"]


def test_feedback_names_the_student_when_known():
    text = report.feedback({**RESULT, "student": "alice"})
    assert text.splitlines()[0].startswith("02_collectives: 2 / 3 points  (alice: tanaka.ipynb")


def test_junit_names_tampering_as_a_property_of_the_suite():
    found = {"cell": "c", "kind": "emptied", "message": "locked cell 'c' was emptied"}
    suite = ET.fromstring(report.junit([{**RESULT, "tampering": [found]}]).split("\n", 1)[1]
                          ).find("testsuite")
    assert suite.find("properties/property[@name='tampering']").get("value") == found["message"]
