"""The lessons as reveal.js slides that a mentor can project with no network.

    make slides                                          # npm installs reveal.js, then this
    python -m dlhack.tools.slides --out build/slides     # every lesson
    python -m dlhack.tools.slides 03 --out build/slides  # one lesson

nbconvert's slides exporter loads reveal.js, MathJax, RequireJS, jQuery and Font Awesome from
CDNs by default. Here every one of those URLs points into ``OUT/node_modules``, where ``make
slides`` installs them from the npm registry (``etc/slides/package.json``), and the slides are
written beside it, so the folder projects offline as it is. A lesson has no slide marks of its
own: each ``#``/``##`` heading starts a slide and every other cell is a sub-slide below it (a
markdown cell holds at most about 350 words, one screen). Mermaid, which no lesson uses, gets a
do-nothing module instead of the CDN's. Cost: a few seconds of nbconvert per lesson.
"""
import argparse
import copy
import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]
MODULES = "node_modules"
LOCAL = {  # SlidesExporter trait -> where make slides puts it, relative to the slides
    "reveal_url_prefix": f"{MODULES}/reveal.js",
    "mathjax_url": f"{MODULES}/mathjax/MathJax.js?config=TeX-AMS_CHTML-full,Safe",
    "require_js_url": f"{MODULES}/requirejs/require.js",
    "jquery_url": f"{MODULES}/jquery/dist/jquery.min.js",
    "font_awesome_url": f"{MODULES}/font-awesome/css/font-awesome.css",
    "mermaid_js_url": "no-mermaid.mjs",
    "mermaid_layout_elk_js_url": "no-mermaid.mjs",
    "jupyter_widgets_base_url": f"{MODULES}/",
}
NO_MERMAID = "// no lesson has a mermaid diagram: nbconvert's loader gets this instead of a CDN\n" \
             "export default {initialize() {}, run() {}, registerLayoutLoaders() {}};\n"
LOADS = [  # what a page fetches by itself (a link in the prose is only followed on a click)
    re.compile(r"""<(?:script|img|iframe|source)\b[^>]*\ssrc\s*=\s*["'](https?://[^"']+)"""),
    re.compile(r"""<link\b[^>]*\shref\s*=\s*["'](https?://[^"']+)"""),
    re.compile(r"""\b(?:import|from)\s*\(?\s*["'](https?://[^"']+)"""),
    re.compile(r"""url\(\s*["']?(https?://[^"')]+)"""),
]


def slide_marks(nb):
    """A copy of ``nb`` with reveal.js marks: a slide per heading, a sub-slide per other cell."""
    marked = copy.deepcopy(nb)
    for cell in marked["cells"]:
        text = cell.get("source", "")
        text = "".join(text) if isinstance(text, list) else text
        heading = cell["cell_type"] == "markdown" and re.match(r"#{1,2}\s", text.lstrip())
        cell.setdefault("metadata", {})["slideshow"] = {
            "slide_type": "slide" if heading else "subslide"}
    return marked


def export(path, out):
    """Write lesson ``path`` as ``OUT/<name>.slides.html``; returns that path."""
    import nbformat
    from nbconvert import SlidesExporter

    exporter = SlidesExporter(reveal_scroll=True, **LOCAL)
    nb = slide_marks(nbformat.read(path, as_version=4))
    body, _ = exporter.from_notebook_node(nb, resources={"metadata": {"name": path.stem}})
    target = out / f"{path.stem}.slides.html"
    target.write_text(body, encoding="utf-8")
    return target


def remote_urls(html):
    """The http(s) URLs of scripts and stylesheets that a page would load from the network."""
    return sorted({url for pattern in LOADS for url in pattern.findall(html)})


def main(argv=None):
    """The command line: export the named lessons (all by default) into --out."""
    parser = argparse.ArgumentParser(prog="python -m dlhack.tools.slides", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lessons", nargs="*", metavar="LESSON",
                        help="a lesson number or name, e.g. 03 (default: every lesson)")
    parser.add_argument("-o", "--out", type=Path, default=ROOT / "build" / "slides",
                        help="the folder with node_modules/ (default: build/slides)")
    args = parser.parse_args(argv)
    if not (args.out / MODULES / "reveal.js" / "dist" / "reveal.js").is_file():
        print(f"no reveal.js under {args.out / MODULES}: run `make slides`, which installs it")
        return 1
    (args.out / "no-mermaid.mjs").write_text(NO_MERMAID)
    every = sorted((ROOT / "lessons").glob("*.ipynb"))
    chosen = [p for p in every if not args.lessons or any(p.stem.startswith(n) for n in args.lessons)]
    failed = 0
    for path in chosen:
        target = export(path, args.out)
        remote = remote_urls(target.read_text(encoding="utf-8"))
        print(f"{target}" + (f"  still loads {remote}" if remote else ""))
        failed += bool(remote)
    return 1 if failed or not chosen else 0


if __name__ == "__main__":
    sys.exit(main())
