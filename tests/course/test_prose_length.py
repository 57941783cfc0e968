"""No markdown cell of a lesson runs over about 350 words: a cell is what a reader takes in
before the next output, and what a mentor projects on one slide. Split a longer one at its
paragraphs or headings. Words are counted as whitespace-separated tokens of the source, code
spans and formulas included (they take as long to read)."""
import nbformat
import pytest

from tests.course.lessontext import NUMBERS, notebook, source

MAX_WORDS = 350


def long_cells(nb, limit=MAX_WORDS):
    """``(cell index, words)`` of every markdown cell over ``limit`` words."""
    return [(i, len(source(c).split())) for i, c in enumerate(nb["cells"])
            if c["cell_type"] == "markdown" and len(source(c).split()) > limit]


@pytest.mark.parametrize("number", NUMBERS)
def test_no_markdown_cell_is_over_350_words(number):
    found = long_cells(notebook(number))
    assert not found, (f"lesson {number}: markdown cells over {MAX_WORDS} words "
                       f"(cell index, words): {found}; split them at a paragraph or heading")


def test_the_count_can_fail():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("word " * 351),
                                         nbformat.v4.new_markdown_cell("word " * 350),
                                         nbformat.v4.new_code_cell("x = 1 " * 400)])
    assert long_cells(nb) == [(0, 351)]
