"""No figure typed into prose: a number with a unit of time, speed or ratio in a lesson's markdown
is one of three things, each listed where a test holds it:

- a claim about the render (``test_claims.py``: its ``prose`` words cover the number);
- a value computed from the lesson's own code or from a formula (``test_lesson_facts.py``),
  repeated in ``FROM_FACTS`` below so this check does not depend on that file's place;
- a setting, a definition or a published figure, listed in ``NOT_MEASURED`` with why.

Anything else is a measurement typed in by hand ("on the course's machine this took 4x"),
which goes stale at the next render: make the cell print it (a ``verdict:`` line) and point the
prose at it.
"""
import re

import nbformat
import pytest

from tests.course.lessontext import NUMBERS, notebook, prose
from tests.course.test_claims import CLAIMS

FIGURE = re.compile(r"(?<![\w.])\d[\d,]*(?:\.\d+)?\s?(?:x|×|ms|µs|us|s|%|sentences/s|GB/s|MB/s|min)"
                    r"(?![\w/])")

FROM_FACTS = {  # the phrases of test_lesson_facts.py's rows: computed from a formula or the code
    "07": ["50% for N = 2, M = 1", "20% with M = 4"],
    "08": ["about 6.4 ms at 100 ranks", "5.9 ms of it latency", "about 6.4 s per allreduce",
           "(2 × 4 GB / 1.25 GB/s)", "over NDR InfiniBand about 0.16 s",
           "NVLink inside one node of 8 H100s about 16 ms"],
}
NOT_MEASURED = {  # lesson -> (phrase, why it is not a measurement)
    "00": [("timeout (60 s unless", "the magic's default"), ("built in (60 s)", "the same default")],
    "02": [("α = 5 µs and 10 GB/s (β = 0.1 ns per byte)", "the model's assumed interconnect")],
    "03": [("2 × 32 sentences", "the batch setting"), ("`32 × p`", "the batch setting"),
           ("the ideal 2x", "the definition of ideal"), ("the ideal at 2 ranks is 2×", "the same"),
           ("the ideal is 2×", "the same"), ("How far from 2× a run lands", "the same"),
           ("a little above 2x", "the same")],
    "04": [("sleeps 20 ms", "the straggler's setting"), ("one update per 20 ms", "from it"),
           ("`4 × HURT_STEPS`", "the setting")],
    "06": [("60 s by default", "the magic's default"),
           ("50 µs plus the gradient's bytes at 12.5 MB/s", "the simulated link's setting")],
    "07": [("2 x (2 layers x B x 128", "an array shape")],
    "08": [("~0.5 µs | ~10 GB/s", "published figures"), ("~5 µs | ~100-450 GB/s", "published"),
           ("~5 µs | ~25 GB/s", "published"), ("~1-2 µs | 25 / 50 GB/s", "published"),
           ("~20-50 µs | 1.25 / 12.5 GB/s", "published"),
           ("top-1 accuracy of 74.9%", "Akiba et al. 2017, the paper's own figure")],
    "09": [("α = 1 ms and 25 MB/s (β = 40 ns per byte)", "the simulated link's setting")],
}


def typed_figures(text, covered_phrases):
    """The figures in ``text`` that no phrase of ``covered_phrases`` covers."""
    covered = [(m.start(), m.end()) for phrase in covered_phrases
               for m in re.finditer(re.escape(phrase), text)]
    return [text[max(0, m.start() - 40):m.end() + 10] for m in FIGURE.finditer(text)
            if not any(a <= m.start() and m.end() <= b for a, b in covered)]


def covering(number):
    return ([c.prose for c in CLAIMS if c.lesson == number] + FROM_FACTS.get(number, [])
            + [phrase for phrase, _why in NOT_MEASURED.get(number, [])])


@pytest.mark.parametrize("number", NUMBERS)
def test_no_measured_figure_is_typed_into_prose(number):
    found = typed_figures(prose(notebook(number)), covering(number))
    assert not found, (f"lesson {number}: figures typed into prose (print them as a verdict, or "
                       f"list a setting in NOT_MEASURED): {found}")


def test_the_check_can_fail():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(
        "On our machine 2 ranks ran 1.85x faster, 12.5 ms a step; the magic waits 60 s.")])
    text = prose(nb)
    assert len(typed_figures(text, [])) == 3
    assert len(typed_figures(text, ["the magic waits 60 s"])) == 2
    every = [phrase for phrases in NOT_MEASURED.values() for phrase, _ in phrases]
    assert all(FIGURE.search(p) for p in every), "a NOT_MEASURED phrase must hold a figure"
