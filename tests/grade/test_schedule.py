"""The grader end to end: the solution earns every point, the lab none, the CLI writes its
reports, and what the grader cannot grade gives a clear error rather than a crash."""
import json
import time
import xml.etree.ElementTree as ET

from dlhack.grade import grade, grade_notebook, notebook
from dlhack.grade.cli import main
from dlhack.grade.plan import load_plan
from dlhack.grade.report import feedback
from tests.grade.gradetools import LAB, PLANTED, SOLUTION, sha256, time_bound


def test_solution_scores_full_marks_in_well_under_a_minute(workdir):
    before = sha256(SOLUTION)
    start = time.monotonic()
    result = grade_notebook(SOLUTION, workdir=workdir)
    elapsed = time.monotonic() - start
    verdict = (result["status"], result["score"], result["max_score"])
    assert verdict == ("graded", 10, 10), feedback(result)
    assert all(run["outcome"] == "passed" for ex in result["exercises"] for t in ex["tests"]
               for run in t["runs"])
    assert sha256(SOLUTION) == before
    assert elapsed < time_bound(45), f"grading the solution took {elapsed:.1f} s"


def test_lab_scores_zero_as_not_yet_done(workdir):
    result = grade_notebook(LAB, workdir=workdir)
    assert (result["status"], result["score"], result["max_score"]) == ("graded", 0, 10)
    assert [ex["status"] for ex in result["exercises"]] == ["not_done"] * 3
    assert "not yet done: allreduce_ring still raises NotImplementedError" in feedback(result)


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


def test_a_detached_child_of_a_rank_is_killed_too(workdir):
    """A process that leaves its rank's session is found by its working directory."""
    sub, _ = notebook.from_notebook(SOLUTION)
    text = sub.text + ("\nimport subprocess\n"
                       "subprocess.Popen(['sleep', '300'], start_new_session=True)\n")
    result = grade(load_plan("02_collectives"), notebook.Submission(text=text, spans=sub.spans),
                   exercises=["allreduce_naive"], workdir=workdir)
    assert result["score"] == 3, feedback(result)  # and the fixture finds no sleep left
