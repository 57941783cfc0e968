"""Mentors' guides quote the renders by generation: every ``<!-- quote -->`` and
``<!-- times -->`` block in mentors/*.md and the README is what ``python -m dlhack.tools.mentors``
writes from the committed renders now, and every quote finds its lines. A quote of a verdict that
an old render lacks is an expected failure until `make lessons` (which refills the blocks)."""
import re

import pytest

from dlhack.tools import mentors
from tests.course.lessontext import old_render

DOCUMENTS = mentors.documents()


@pytest.mark.parametrize("path", DOCUMENTS, ids=[p.name for p in DOCUMENTS])
def test_quoted_blocks_are_current_and_find_their_lines(path):
    text = path.read_text(encoding="utf-8")
    new, problems = mentors.fill(text)
    assert new == text, f"{path.name}: a quoted block is stale: run `python -m dlhack.tools.mentors`"
    waiting = [p for p in problems if old_render(re.match(r"quote (\d+)", p)[1])]
    assert problems == waiting, problems
    if waiting:
        pytest.xfail(f"{path.name}: quotes verdicts an old render lacks: {waiting[0]}")


def test_a_stale_or_empty_quote_is_caught():
    block = "<!-- quote 07 ^loss: split -->\nold text\n<!-- end -->\n"
    new, problems = mentors.fill("intro\n" + block)
    assert problems == [] and "loss: split" in new and "old text" not in new
    assert mentors.fill(new) == (new, [])  # filled once, current
    _, problems = mentors.fill("<!-- quote 07 ^no such line$ -->\n<!-- end -->\n")
    assert problems == ["quote 07 '^no such line$': no output line matches"]


def test_times_blocks_say_render_time_not_room_time():
    body, problem = mentors.times("all")
    assert problem is None and body.count("\n| 0") == len(list(mentors.ROOT.glob("lessons/*.ipynb")))
    one, _ = mentors.times("00")
    assert "Render time, not room time" in one or "Not recorded" in one
