"""Every lesson has a mentor's guide in mentors/, listed in mentors/README.md, with the five
parts issue 15 asks for: the time, what to say first, predict-then-run questions with answers,
the common failures with what the learner sees, and what to skip when short of time."""

import pytest

from tests.support import LESSONS, ROOT

PARTS = ("## Time", "## Say before running", "## Predict, then run",
         "## Common failures, and what the learner sees", "## Short of time")


@pytest.mark.parametrize("lesson", [path.stem for path in LESSONS])
def test_every_lesson_has_a_whole_guide(lesson):
    guide = ROOT / "mentors" / f"{lesson}.md"
    assert guide.is_file(), f"no mentor's guide for lessons/{lesson}.ipynb: write {guide.name}"
    text = guide.read_text(encoding="utf-8")
    missing = [part for part in PARTS if part not in text]
    assert not missing, f"mentors/{guide.name} lacks {', '.join(missing)}"
    assert text.count("**Answer**") >= 2, f"mentors/{guide.name}: give two or more answers"
    assert f"({guide.name})" in (ROOT / "mentors" / "README.md").read_text(encoding="utf-8"), \
        f"mentors/README.md does not list {guide.name}"
