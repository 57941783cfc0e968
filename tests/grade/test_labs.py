"""``dlhack labs generate|check`` (dlhack.grade.labs): labs/ is made from solutions/, and the
check names a stale or missing lab. What the committed labs hold is tests/course/test_labs.py's."""
import shutil

from dlhack.grade import labs
from tests.grade.gradetools import SOLUTION


def test_committed_labs_are_up_to_date_with_solutions(capsys):
    assert labs.main(["check"]) == 0, capsys.readouterr().out


def test_check_names_a_stale_or_missing_lab(tmp_path, capsys):
    for folder in ("solutions", "labs"):
        (tmp_path / folder).mkdir()
    shutil.copy(SOLUTION, tmp_path / "solutions")
    assert labs.main(["check", "--root", str(tmp_path)]) == 1
    assert "02_collectives.ipynb: missing" in capsys.readouterr().out
    assert labs.main(["generate", "--root", str(tmp_path)]) == 0
    assert labs.main(["check", "--root", str(tmp_path)]) == 0
    solution = tmp_path / "solutions" / "02_collectives.ipynb"
    solution.write_text(solution.read_text().replace("Lab 2", "Lab two"))
    capsys.readouterr()
    assert labs.main(["check", "--root", str(tmp_path)]) == 1
    assert "02_collectives.ipynb: stale" in capsys.readouterr().out
