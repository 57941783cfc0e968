"""The render tool (dlhack.tools.render): its staleness checker, tried on edited copies of a
rendered lesson so that it can fail, its --check command, and the stamp it writes. That the
committed lessons are current is tests/course/test_rendered.py's."""
import copy
import json
import subprocess
import sys

import nbformat
import pytest

from dlhack.tools import render
from tests.support import LESSONS


@pytest.fixture
def rendered():
    """A rendered lesson to spoil (the first one that has a stamp)."""
    for path in LESSONS:
        nb = nbformat.read(path, as_version=4)
        if nb.metadata.get("dlhack", {}).get("rendered"):
            return path, nb
    pytest.fail("no lesson is rendered: run `make lessons`")


def test_checker_names_a_cell_edited_after_rendering(rendered):
    path, nb = rendered
    edited = copy.deepcopy(nb)
    index = next(i for i, c in enumerate(edited.cells) if c.cell_type == "code")
    first = edited.cells[index].source.splitlines()[0]
    edited.cells[index].source += "\nprint('one more line')"
    problems = render.problems(edited, path.stem)
    assert len(problems) == 1, problems
    assert f"cell {index} changed" in problems[0] and repr(first[:70]) in problems[0]
    assert "make lessons" in problems[0] and f"dlhack.tools.render {path.stem}" in problems[0]
    assert render.problems(nb, path.stem) == []  # the original is still current


def test_checker_reports_a_removed_cell_and_a_missing_stamp(rendered):
    path, nb = rendered
    fewer = copy.deepcopy(nb)
    last = max(i for i, c in enumerate(fewer.cells) if c.cell_type == "code")
    del fewer.cells[last]
    assert any("removed" in p for p in render.problems(fewer, path.stem))
    bare = copy.deepcopy(nb)
    del bare.metadata["dlhack"]
    problems = render.problems(bare, path.stem)
    assert len(problems) == 1 and "never rendered" in problems[0] and "make lessons" in problems[0]
    empty = copy.deepcopy(nb)
    for cell in empty.cells:
        if cell.cell_type == "code":
            cell.outputs = []
    assert "no code cell has outputs" in render.problems(empty, path.stem)[0]


def test_check_command_exits_1_on_a_stale_copy(rendered, tmp_path):
    path, nb = rendered
    edited = copy.deepcopy(nb)
    cell = next(c for c in edited.cells if c.cell_type == "code")
    cell.source = "# edited\n" + cell.source
    stale = tmp_path / path.name
    nbformat.write(edited, stale)
    done = subprocess.run([sys.executable, "-m", "dlhack.tools.render", "--check", str(stale)],
                          capture_output=True, text=True, check=False)
    assert done.returncode == 1 and "changed after its outputs were rendered" in done.stdout, done


def test_collapse_keeps_what_a_terminal_shows():
    assert render.collapse("epoch 1  10%\repoch 1 100%\ndone\r\n") == "epoch 1 100%\ndone\n"


def test_stamping_twice_keeps_one_stamp_cell():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell("x = 1")])
    render.stamp_cell(nb, "first")
    render.stamp_cell(nb, "second")
    assert [c.source for c in nb.cells] == ["second", "x = 1"]
    json.dumps(nb)  # still a plain notebook
