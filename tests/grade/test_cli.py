"""``dlhack grade`` on the command line (dlhack.grade.cli): a class folder into JSON and JUnit, and
a clear exit status and message when it cannot grade: no graded tests, an unknown lab, an
mpiexec that cannot start; nbgrader's collected submitted/ tree into every output."""
import csv
import json
import xml.etree.ElementTree as ET

import pytest

from dlhack.grade.cli import main
from tests.grade.gradetools import LAB, PLANTED, SOLUTION


def test_cli_grades_a_folder_into_json_and_junit(tmp_path, capsys):
    folder = tmp_path / "02_collectives"  # the lab comes from the folder's name
    folder.mkdir()
    for name in ("not_json", "missing_import", "forge_result"):
        (folder / f"{name}.ipynb").write_bytes((PLANTED / f"{name}.ipynb").read_bytes())
    out_json, out_xml = tmp_path / "out" / "grades.json", tmp_path / "out" / "grades.xml"
    assert main([str(folder), "--json", str(out_json), "--junit-xml", str(out_xml), "-t", "8"]) == 0
    results = json.loads(out_json.read_text())["submissions"]
    assert [(r["lab"], r["status"], r["score"]) for r in results] == [
        ("02_collectives", "tampered", 0), ("02_collectives", "error", 0),
        ("02_collectives", "invalid", 0)]
    suites = ET.parse(out_xml).getroot().findall("testsuite")
    assert len(suites) == 3
    counts = {k: int(suites[1].get(k)) for k in ("tests", "failures", "skipped")}
    # The runs that had started when the import failed fail; the rest are skipped.
    assert counts["failures"] >= 1
    assert counts["failures"] + counts["skipped"] == counts["tests"] == 19
    assert "02_collectives: 0 / 10 points" in capsys.readouterr().out
    assert not list((tmp_path / "out").glob(".*")), "a temporary file was left beside the reports"


def test_cli_says_where_the_graded_tests_are_missing(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("DLHACK_ROOT", str(tmp_path))
    assert main([str(LAB)]) == 2
    err = capsys.readouterr().err
    assert "graded/conftest.py" in err and "DLHACK_ROOT" in err


def test_cli_refuses_an_unknown_lab(capsys):
    assert main([str(LAB), "--lab", "99_nothing"]) == 2
    assert "unknown lab '99_nothing'" in capsys.readouterr().err


def test_an_mpiexec_that_cannot_start_is_not_the_learners_fault(tmp_path, monkeypatch, capsys):
    fake = tmp_path / "mpiexec"
    fake.write_text("#!/bin/sh\necho 'hydra: cannot connect to the proxy' >&2\nexit 7\n")
    fake.chmod(0o755)
    monkeypatch.setenv("DLHACK_MPIEXEC", str(fake))
    assert main([str(SOLUTION), "--exercise", "allreduce_naive"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "not the learner's doing (mpiexec could not start the ranks: hydra: cannot" in out


def submitted_tree(course, who):
    """nbgrader's collected layout: course/submitted/STUDENT/LAB/LAB.ipynb + timestamp.txt."""
    for student, (source, stamp) in who.items():
        folder = course / "submitted" / student / "02_collectives"
        folder.mkdir(parents=True)
        (folder / "02_collectives.ipynb").write_bytes(source.read_bytes())
        (folder / "timestamp.txt").write_text(stamp)
        (folder / "submission_secret.txt").write_text(f"secret-of-{student}")
    return course / "submitted"


def test_cli_grades_nbgrader_s_submitted_tree(tmp_path, capsys):
    """Identity from the folder, time from timestamp.txt, late after --due, every output."""
    tree = submitted_tree(tmp_path / "course", {
        "alice": (SOLUTION, "2026-12-02 08:00:00.000000 UTC"),
        "bob": (PLANTED / "wrong_naive.ipynb", "2026-12-03 10:00:00.000000 UTC")})
    out = tmp_path / "out"
    status = main([str(tree), "-e", "allreduce_naive", "--due", "2026-12-03T09:00+00:00",
                   "--fail-under", "50", "--csv", str(out / "g.csv"),
                   "--nbgrader-csv", str(out / "nb.csv"), "--json", str(out / "g.json"),
                   "--junit-xml", str(out / "g.xml"), "--feedback", str(tmp_path / "feedback")])
    assert status == 3, capsys.readouterr().out  # bob scored under 50%
    doc = json.loads((out / "g.json").read_text())
    assert doc["schema"] == "dlhack-grade/1"
    with open(out / "g.csv") as f:
        rows = {row["student_id"]: row for row in csv.DictReader(f)}
    assert {s: (r["allreduce_naive"], r["late"]) for s, r in rows.items()} == {
        "alice": ("3", "0"), "bob": ("0", "1")}
    nb_rows = (out / "nb.csv").read_text().splitlines()
    assert nb_rows[1].startswith("02_collectives,2026-12-03 09:00:00,2026-12-02 08:00:00,alice,")
    suites = ET.parse(out / "g.xml").getroot().findall("testsuite")
    assert [s.get("name") for s in suites] == ["02_collectives:alice", "02_collectives:bob"]
    assert all(s.get("timestamp") and float(s.get("time")) > 0 for s in suites)
    page_dir = tmp_path / "feedback" / "bob" / "02_collectives"
    page = (page_dir / "02_collectives.html").read_text()
    assert "feedback for bob" in page and "ranks: failed" in page and "late" in page
    assert (page_dir / "submission_secret.txt").read_text() == "secret-of-bob"
    assert "alice" not in page


def test_cli_help_shows_the_whole_flow_and_no_pytest_short_options(capsys):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = capsys.readouterr().out
    for step in ("nbgrader collect", "dlhack grade COURSE/submitted/", "--feedback",
                 "nbgrader release_feedback", "--fail-under", "--junit-xml", "--slots"):
        assert step in text
    for clash in ("-x,", "-m ", "-c ", "-n ", "-l "):  # pytest's, or -n: ranks elsewhere
        assert f"  {clash}" not in text, clash
