"""``dlhack submit``'s paths: the learner's copy when the server names it, else here.

The hand-in itself (nbgrader's exchange, Unix learners) is tested in
tests/cluster/test_handin.py, and from JupyterLab in tests/browser/test_handin_in_browser.py.
"""
from pathlib import Path

from dlhack.grade import handin

LAB = "02_collectives"


def test_without_a_workspace_the_paths_are_here(monkeypatch):
    monkeypatch.delenv(handin.ENV_WORKSPACE, raising=False)
    assert handin.workspace() == Path(".")


def test_a_cell_in_any_folder_hands_in_the_copy_of_the_lab(monkeypatch, tmp_path, capsys):
    copy, elsewhere = tmp_path / "dlhack", tmp_path / "kernel_cwd"
    (copy / "labs").mkdir(parents=True)
    elsewhere.mkdir()
    (copy / "labs" / f"{LAB}.ipynb").write_text("{}")
    monkeypatch.setenv(handin.ENV_WORKSPACE, str(copy))
    monkeypatch.chdir(elsewhere)  # the lab's set-up cell moves the kernel to a scratch folder
    handed = []

    def fake_submit(lab, notebook, course=None, exchange=None):
        handed.append((lab, Path(notebook)))
        return 0, f"[SubmitApp | INFO] Destination: /x/inbound/me+{LAB}+2026-12-02 03:40:01 UTC+k"

    monkeypatch.setattr(handin, "submit", fake_submit)
    assert handin.main([LAB]) == 0
    assert handed == [(LAB, copy / "labs" / f"{LAB}.ipynb")]
    assert "(at 2026-12-02 03:40:01 UTC)" in capsys.readouterr().out


def test_a_missing_notebook_is_named_with_its_full_path(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(handin.ENV_WORKSPACE, str(tmp_path))
    assert handin.main([LAB]) == 2
    assert str(tmp_path / "labs" / f"{LAB}.ipynb") in capsys.readouterr().err


def test_fetched_feedback_lands_in_the_copy_and_is_named(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv(handin.ENV_WORKSPACE, str(tmp_path))
    folders = []

    def fake_fetch(lab, folder, course=None, exchange=None):
        folders.append(Path(folder))
        for stamp in ("2026-12-01 10:00:00 UTC", "2026-12-02 09:00:00 UTC"):
            page = Path(folder, lab, "feedback", stamp, f"{lab}.html")
            page.parent.mkdir(parents=True)
            page.write_text("<p>Score</p>")
        return 0, "fetched"

    monkeypatch.setattr(handin, "fetch_feedback", fake_fetch)
    assert handin.main(["--feedback", LAB]) == 0
    assert folders == [tmp_path]
    lines = [line for line in capsys.readouterr().out.splitlines() if line.startswith("feedback:")]
    assert lines[0].endswith(f"2026-12-02 09:00:00 UTC/{LAB}.html")  # the newest first
    assert len(lines) == 2
