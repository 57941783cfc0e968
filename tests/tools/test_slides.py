"""The lessons project as slides with no network: ``dlhack.tools.slides`` points every script
and stylesheet of nbconvert's reveal.js page at ``build/slides/node_modules``, which `make test`
and `make slides` install from the npm registry (etc/slides/package.json). One lesson is built
here; the check that finds CDN URLs is also run on nbconvert's default page, where it must."""
from pathlib import Path

import nbformat
import pytest

from dlhack.tools import slides

MODULES = slides.ROOT / "build" / "slides" / slides.MODULES
LESSON = slides.ROOT / "lessons" / "00_getting_started.ipynb"


@pytest.fixture(scope="module")
def built(tmp_path_factory):
    if not (MODULES / "reveal.js" / "dist" / "reveal.js").is_file():
        pytest.fail(f"reveal.js is not installed under {MODULES}: `make test` and `make slides` "
                    "install it (npm, etc/slides/package.json)")
    out = tmp_path_factory.mktemp("slides")
    (out / slides.MODULES).symlink_to(MODULES)
    assert slides.main(["00", "--out", str(out)]) == 0
    return out, (out / f"{LESSON.stem}.slides.html").read_text(encoding="utf-8")


def test_a_lesson_builds_into_slides_that_load_nothing_remote(built):
    _out, html = built
    assert "Reveal.initialize" in html and html.count("<section") > 10
    assert slides.remote_urls(html) == []


def test_every_local_file_the_slides_load_is_installed(built):
    out, html = built
    for trait, url in slides.LOCAL.items():
        path = out / url.split("?")[0]
        if trait != "jupyter_widgets_base_url":
            assert path.is_file() or (trait == "reveal_url_prefix" and path.is_dir()), path
        assert url.split("?")[0] in html or trait.startswith(("jupyter", "mermaid_layout",
                                                              "jquery", "font"))
    assert (out / slides.MODULES / "reveal.js" / "dist" / "reveal.css").is_file()


def test_the_check_finds_nbconvert_s_default_cdns():
    from nbconvert import SlidesExporter

    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# One\n\n$x^2$")])
    html, _ = SlidesExporter().from_notebook_node(nb)
    remote = slides.remote_urls(html)
    assert any("reveal.js" in url for url in remote) and any("require" in url for url in remote)


def test_headings_start_slides_and_other_cells_are_subslides():
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell("# Lesson"),
                                         nbformat.v4.new_markdown_cell("text"),
                                         nbformat.v4.new_code_cell("x = 1"),
                                         nbformat.v4.new_markdown_cell("## 1. Part"),
                                         nbformat.v4.new_markdown_cell("### detail")])
    marked = slides.slide_marks(nb)
    assert [c.metadata["slideshow"]["slide_type"] for c in marked.cells] == [
        "slide", "subslide", "subslide", "slide", "subslide"]
    assert "slideshow" not in nb.cells[0].metadata  # the lesson itself is not changed
    assert Path(slides.__file__).name == "slides.py"
