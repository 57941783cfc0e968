"""A feedback page per learner (dlhack.grade.feedback): where nbgrader's release_feedback looks,
with nbgrader's files beside it, and for each failing test its ranks and message."""
from pathlib import Path

from dlhack.grade import feedback, layout
from tests.grade.gradetools import RESULT, RUN_BAD


def test_the_page_goes_where_release_feedback_looks_with_its_files(tmp_path):
    folder = tmp_path / "submitted" / "alice" / "02_collectives"
    folder.mkdir(parents=True)
    (folder / "02_collectives.ipynb").write_text("{}")
    (folder / "timestamp.txt").write_text("2026-12-02 00:55:01.000000 UTC")
    (folder / "submission_secret.txt").write_text("s3cret")
    entry = layout.entry(folder / "02_collectives.ipynb")
    result = layout.annotate({**RESULT, "student": None}, entry)
    page = feedback.write(tmp_path / "feedback", result, entry)
    assert page == tmp_path / "feedback" / "alice" / "02_collectives" / "02_collectives.html"
    assert (page.parent / "submission_secret.txt").read_text() == "s3cret"
    assert (page.parent / "timestamp.txt").is_file()
    text = page.read_text()
    assert "feedback for alice" in text and "Score: 2 / 3" in text
    # the failing test: its exercise, the rank count it failed at, and the grader's message
    assert ("<td>allreduce_ring</td><td>test_b</td><td>failed</td><td>3 ranks: failed</td>"
            "<td>at 3 ranks: rank 1: wrong</td>") in text


def test_a_notebook_outside_the_layout_gets_a_page_by_its_name(tmp_path):
    entry = layout.Entry(Path("x/tanaka.ipynb"))
    page = feedback.write(tmp_path, {**RESULT, "warnings": ["<b>"]}, entry)
    assert page == tmp_path / "tanaka.html"
    assert "<p class='warn'>&lt;b&gt;</p>" in page.read_text()  # a learner's text, escaped


def test_one_rank_is_named_in_the_singular():
    assert feedback.at(1) == "1 rank" and feedback.at(4) == "4 ranks"


def test_rank_counts_the_grader_skipped_are_not_listed_as_failures(tmp_path):
    skipped = {**RUN_BAD, "ranks": 1, "outcome": "not_run"}
    test = {**RESULT["exercises"][0]["tests"][-1], "runs": [skipped, RUN_BAD]}
    result = {**RESULT, "exercises": [{**RESULT["exercises"][0], "tests": [test]}]}
    rows = feedback.failing(result)
    assert [row[3] for row in rows] == ["3 ranks: failed"]
