"""What the course tests read from a committed lesson: its prose, its render and its verdicts.

    from tests.course.lessontext import notebook, prose, output_lines, verdicts, rerender_xfail

A *verdict* is an output line that starts with ``verdict:`` (after the ``[rank]`` mark of a
``%%mpiexec`` or ``dlhack run`` line): the sentence a cell prints about what it measured,
e.g. ``verdict: 2 ranks 0.87x of one process (efficiency 0.43): slower``. Claims in prose are
held to verdicts by ``test_claims.py``; mentors' guides quote them (``dlhack.tools.mentors``).
"""
import json
import re
from functools import cache

import pytest

from dlhack.tools import render
from dlhack.tools.mentors import output_lines
from tests.support import LESSONS, ROOT

NUMBERS = [p.stem[:2] for p in LESSONS]


def lesson_path(number):
    (path,) = (ROOT / "lessons").glob(f"{number}_*.ipynb")
    return path


@cache
def notebook(number):
    return json.loads(lesson_path(number).read_text(encoding="utf-8"))


def source(cell):
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def stamp(nb):
    return nb.get("metadata", {}).get("dlhack", {}).get("rendered") or {}


def old_render(number):
    """Whether lesson ``number``'s committed render predates the current render format."""
    return stamp(notebook(number)).get("format", 1) < render.FORMAT


def rerender_xfail(number):
    """Strict xfail while lesson ``number`` keeps a render older than ``render.FORMAT``.

    Once the coordinator re-renders (``make lessons``), the condition is false and the test
    runs as any other; while the old render is there, a pass would be an XPASS, a failure.
    """
    return pytest.mark.xfail(old_render(number), strict=True,
                             reason=f"lesson {number}'s committed render predates render format "
                                    f"{render.FORMAT}: passes after `make lessons` re-renders it")


def prose(nb):
    """The lesson's markdown (the stamp left out), whitespace collapsed to single spaces."""
    cells = [source(c) for c in nb["cells"] if c["cell_type"] == "markdown"
             and render.STAMP_TAG not in c.get("metadata", {}).get("tags", [])]
    return re.sub(r"\s+", " ", "\n".join(cells))


def verdicts(nb):
    """The ``verdict:`` lines of a render, ``(cell index, line)``."""
    return [(i, line) for i, line in output_lines(nb) if line.startswith("verdict:")]
