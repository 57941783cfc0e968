"""Renders you can trust and read: each committed lesson came from a clean commit its stamp
names, its outputs read as JupyterLab shows them (no escape codes, progress bars collapsed, no
stream in fragments), nothing in them came from ``../shared``, and each section's time is
recorded for the mentors. Every checker is also run on a spoiled copy, so it can fail.

Tests of the committed renders carry ``rerender_xfail``: strict xfails while a lesson keeps a
render older than ``dlhack.tools.render.FORMAT``; after `make lessons` they run as usual.
"""
import copy
import subprocess
import sys

import nbformat
import pytest

from dlhack.tools import outputs, render
from tests.course.lessontext import (
    LESSONS,
    NUMBERS,
    ROOT,
    notebook,
    old_render,
    rerender_xfail,
    source,
    stamp,
)


def committed_digests(commit, path):
    """The code-cell digests of ``path`` as committed in ``commit``, or None if git lacks it."""
    rel = path.relative_to(ROOT).as_posix()
    done = subprocess.run(["git", "show", f"{commit}:{rel}"], cwd=ROOT, capture_output=True,
                          text=True, check=False)
    if done.returncode:
        return None
    return render.digests(nbformat.reads(done.stdout, as_version=4))


def stamp_problems(nb, path):
    """Why the stamp of ``nb`` does not name the clean commit that was rendered; [] if it does."""
    rendered = stamp(nb)
    commit = rendered.get("commit", "")
    if rendered.get("format", 1) < render.FORMAT or " " in commit:
        return [f"{path.stem}: stamped {commit!r}, not a clean commit: `make lessons`"]
    kept = committed_digests(commit, path)
    if kept is None:
        return [f"{path.stem}: commit {commit[:12]} holds no {path.name} (or git lacks it)"]
    if kept != rendered.get("digests"):
        return [f"{path.stem}: the code rendered is not {path.name} as committed in {commit[:12]}"]
    return []


@pytest.mark.parametrize("number", [pytest.param(n, marks=rerender_xfail(n)) for n in NUMBERS])
def test_the_stamp_names_the_commit_that_was_rendered(number):
    path = LESSONS[NUMBERS.index(number)]
    assert stamp_problems(notebook(number), path) == []
    assert "from a clean checkout of commit" in source(notebook(number)["cells"][0])


@pytest.mark.parametrize("number", NUMBERS)
def test_outputs_read_as_jupyterlab_shows_them(number):
    found = outputs.problems(notebook(number), number)
    if found and old_render(number):  # some old renders were clean already: no strict mark
        pytest.xfail(f"lesson {number}'s render predates render format {render.FORMAT}: "
                     f"`make lessons` re-renders it ({found[0]})")
    assert found == []


@pytest.mark.parametrize("number", [pytest.param(n, marks=rerender_xfail(n)) for n in NUMBERS])
def test_each_section_has_its_time(number):
    rendered = stamp(notebook(number))
    sections = rendered["sections"]
    assert sections and all(s["title"] and s["seconds"] >= 0 for s in sections), sections
    total = sum(s["seconds"] for s in sections)
    assert 0 < total <= rendered["seconds"] + 1, (total, rendered["seconds"])


def test_stamp_check_catches_a_dirty_or_wrong_commit():
    path = LESSONS[0]
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                          text=True, check=True).stdout.strip()
    nb = {"metadata": {"dlhack": {"rendered": {
        "format": render.FORMAT, "commit": head, "digests": committed_digests(head, path)}}}}
    assert stamp_problems(nb, path) == []
    dirty = copy.deepcopy(nb)
    dirty["metadata"]["dlhack"]["rendered"]["commit"] = head[:7] + " (with uncommitted changes)"
    assert "not a clean commit" in stamp_problems(dirty, path)[0]
    other = copy.deepcopy(nb)
    other["metadata"]["dlhack"]["rendered"]["digests"][0] = "0" * 64
    assert "not " in stamp_problems(other, path)[0] and "as committed" in stamp_problems(other, path)[0]


def spoiled():
    """A small notebook whose outputs have every fault the checker looks for."""
    cell = nbformat.v4.new_code_cell("train()")
    bar = [nbformat.v4.new_output("stream", name="stdout", text=f"\r[{'#' * i:<4}] {25 * i}%")
           for i in range(1, 5)]
    cell.outputs = [*bar, nbformat.v4.new_output("stream", name="stdout", text="\n\x1b[J1  313\n"),
                    nbformat.v4.new_output("stream", name="stdout",
                                           text="../../shared/data/small_parallel_enja -> 50000\n")]
    return nbformat.v4.new_notebook(cells=[cell])


def test_output_check_catches_each_fault():
    found = "\n".join(outputs.problems(spoiled(), "x"))
    for fault in ("escape code", "carriage return", "fragments", "outside the repository"):
        assert fault in found, (fault, found)


def test_clean_makes_the_bar_one_line_and_drops_escape_codes():
    nb = outputs.clean(spoiled())
    (only,) = nb.cells[0].outputs
    assert only["text"] == "[####] 100%\n1  313\n../../shared/data/small_parallel_enja -> 50000\n"
    assert [p for p in outputs.problems(nb, "x") if "outside" not in p] == []


def test_collapse_keeps_what_a_terminal_shows():
    assert outputs.collapse("epoch 1  10%\repoch 1 100%\ndone\r\n") == "epoch 1 100%\ndone\n"
    assert outputs.collapse("\x1b[31mred\x1b[0m \x1b[Jrow") == "red row"


def git_repo(tmp_path):
    repo = tmp_path / "repo"
    (repo / "lessons").mkdir(parents=True)
    (repo / "lessons" / "00_x.ipynb").write_text("committed\n")
    (repo / "src").mkdir()
    (repo / "src" / "kept.py").write_text("x = 1\n")
    for args in (["init", "-q"], ["add", "-A"],
                 ["-c", "user.email=t@t", "-c", "user.name=t", "commit", "-qm", "one"]):
        subprocess.run(["git", *args], cwd=repo, check=True)
    return repo


def test_a_render_runs_only_committed_files_and_refuses_an_edited_lesson(tmp_path, monkeypatch):
    repo = git_repo(tmp_path)
    monkeypatch.setattr(render, "ROOT", repo)
    lesson = repo / "lessons" / "00_x.ipynb"
    assert not render.uncommitted(lesson)
    (repo / "src" / "kept.py").write_text("x = 2  # not committed\n")
    (repo / "src" / "new.py").write_text("untracked\n")
    with render.clean_checkout() as (commit, folder):
        assert len(commit) == 40
        assert (folder / "src" / "kept.py").read_text() == "x = 1\n"
        assert not (folder / "src" / "new.py").exists() and not (folder.parent / "shared").exists()
    assert not folder.exists()  # removed afterwards
    lesson.write_text("edited\n")
    assert render.uncommitted(lesson)
    (repo / "lessons" / "01_y.ipynb").write_text("never committed\n")
    assert render.uncommitted(repo / "lessons" / "01_y.ipynb")


def test_the_kernel_imports_the_checkout(monkeypatch):
    for name in ("PYTHONPATH", "OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS",
                 "PYDEVD_DISABLE_FILE_VALIDATION", "DLHACK_SMALL"):
        monkeypatch.setenv(name, "1" if name == "DLHACK_SMALL" else "")  # restored afterwards
    with render.clean_checkout() as (_commit, folder):
        render.kernel_environment(folder)
        probe = "import dlhack, os; print(dlhack.__file__, os.environ.get('DLHACK_SMALL'))"
        done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                              check=True)
        assert done.stdout.startswith(str(folder / "src" / "dlhack")), done.stdout
        assert done.stdout.split()[-1] == "None"


def test_sections_split_at_headings():
    cells = [nbformat.v4.new_code_cell("import x"), nbformat.v4.new_markdown_cell("# Lesson"),
             nbformat.v4.new_markdown_cell("text"), nbformat.v4.new_markdown_cell("## 1. One"),
             nbformat.v4.new_code_cell("a"), nbformat.v4.new_markdown_cell("### a detail"),
             nbformat.v4.new_code_cell("b")]
    got = render.sections(nbformat.v4.new_notebook(cells=cells), {0: 0.5, 4: 1.0, 6: 2.04})
    assert got == [{"title": "setup", "seconds": 0.5, "cells": 1},
                   {"title": "Lesson", "seconds": 0.0, "cells": 0},
                   {"title": "1. One", "seconds": 3.0, "cells": 2}]
