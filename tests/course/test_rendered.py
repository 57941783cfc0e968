"""Every lesson is committed with its outputs, and they are current: no code cell changed since.

``python -m dlhack.tools.render`` (``make lessons``) runs a lesson at full size and stamps it with
a sha256 of each code cell's source; here, a cell whose source no longer matches its digest is a
stale output. The checker itself is tested on edited copies of a rendered lesson, so that it can
fail, in tests/tools/test_render.py.
"""

import nbformat
import pytest

from dlhack.tools import render
from tests.support import LESSONS


def read(path):
    return nbformat.read(path, as_version=4)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_lesson_outputs_are_rendered_and_current(path):
    problems = render.problems(read(path), path.stem)
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("path", LESSONS, ids=[p.stem for p in LESSONS])
def test_the_stamp_is_visible_once_at_the_top(path):
    nb = read(path)
    tagged = [i for i, c in enumerate(nb.cells)
              if render.STAMP_TAG in c.get("metadata", {}).get("tags", [])]
    assert tagged == [0], f"{path.name}: cells tagged {render.STAMP_TAG!r} at {tagged}, want [0]"
    assert nb.cells[0].source.startswith("*Outputs rendered at full size on "), nb.cells[0].source
    machine = nb.metadata["dlhack"]["rendered"]["machine"]
    assert machine["cores"] and machine["cpu"] and machine["python"], machine
