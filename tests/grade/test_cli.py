"""``dlhack grade`` on the command line (dlhack.grade.cli): a class folder into JSON and JUnit, and
a clear exit status and message when it cannot grade: no graded tests, an unknown lab, an
mpiexec that cannot start."""
import json
import xml.etree.ElementTree as ET

from dlhack.grade.cli import main
from tests.grade.gradetools import LAB, PLANTED, SOLUTION


def test_cli_grades_a_folder_into_json_and_junit(tmp_path, capsys):
    folder = tmp_path / "02_collectives"  # the lab comes from the folder's name
    folder.mkdir()
    for name in ("not_json", "missing_import", "forge_result"):
        (folder / f"{name}.ipynb").write_bytes((PLANTED / f"{name}.ipynb").read_bytes())
    out_json, out_xml = tmp_path / "out" / "grades.json", tmp_path / "out" / "grades.xml"
    assert main([str(folder), "--json", str(out_json), "--junit", str(out_xml), "-t", "8"]) == 0
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
