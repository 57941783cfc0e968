"""Japanese in every plot, from a font that comes from PyPI (no system install).

    from dlhack.figures.fonts import pyplot
    plt = pyplot()        # matplotlib.pyplot, with IPAexGothic added as a fallback font

The ``matplotlib-fontja`` package (a dependency of the course) ships the IPAexGothic font file.
It is registered with matplotlib's font manager here, by its path, without importing the package
(which would make IPAexGothic the font of every text). The font goes at the end of
``font.family``: Latin text keeps matplotlib's default font, and a glyph that font lacks (Japanese)
is drawn from IPAexGothic. Cost: reading one 6 MB font file, once per process.
"""
import importlib.util
from functools import cache
from pathlib import Path

PACKAGE = "matplotlib_fontja"
FONT_FILE = Path("fonts") / "ipaexg.ttf"  # inside the package


@cache
def font_file():
    """The path of the bundled IPAexGothic file, or None when the package is not installed."""
    spec = importlib.util.find_spec(PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        return None
    path = Path(next(iter(spec.submodule_search_locations))) / FONT_FILE
    return path if path.is_file() else None


def use_japanese_font():
    """Register the bundled Japanese font as matplotlib's fallback; its name, or None without it.

    Safe to call any number of times (lesson 1 calls it, and so does every figure here).
    """
    from matplotlib import font_manager, rcParams

    path = font_file()
    if path is None:
        return None
    name = font_manager.FontProperties(fname=str(path)).get_name()
    if name not in {f.name for f in font_manager.fontManager.ttflist}:
        font_manager.fontManager.addfont(str(path))
    family = list(rcParams["font.family"])
    if name not in family:
        rcParams["font.family"] = [*family, name]
    return name


def pyplot():
    """``matplotlib.pyplot``, after ``use_japanese_font()``: what every figure here draws with."""
    import matplotlib.pyplot as plt

    use_japanese_font()
    return plt
