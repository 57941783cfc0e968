"""Japanese shows in every plot, from the font file that matplotlib-fontja ships (PyPI).

Drawing runs in a fresh interpreter each time, so that registering the font here cannot hide a
missing one elsewhere. matplotlib warns "Glyph N ... missing from font(s)" for a character it
cannot draw: that warning is what the checks look for, and the first check shows that it does
appear when the font is not registered.
"""
import ast
import subprocess
import sys
from pathlib import Path

from dlhack.figures import fonts

FIGURES = Path(fonts.__file__).parent
DRAW = """
import warnings
import matplotlib
matplotlib.use("Agg")
{setup}
with warnings.catch_warnings(record=True) as caught:
    warnings.simplefilter("always")
    fig, ax = plt.subplots()
    ax.set_title("翻訳モデル: English and 日本語")
    ax.set_xticks([0, 1], ["トム", "りんご"])
    fig.canvas.draw()
print("\\n".join(str(w.message) for w in caught if "missing from font" in str(w.message)))
"""


def missing_glyphs(setup):
    code = DRAW.format(setup=setup)
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=120, check=True)
    return done.stdout.strip()


def test_without_the_font_matplotlib_reports_missing_glyphs():
    # the check below can fail: a plain pyplot has no Japanese glyphs
    assert "missing from font" in missing_glyphs("import matplotlib.pyplot as plt")


def test_figures_pyplot_draws_japanese():
    assert fonts.font_file() is not None, "matplotlib-fontja is not installed: `make venv`"
    assert missing_glyphs("from dlhack.figures.fonts import pyplot\nplt = pyplot()") == ""


def test_a_lesson_figure_draws_japanese():
    setup = ("import matplotlib.pyplot as plt\nplt.show = lambda: None\n"
             "from dlhack import figures\n"
             "figures.alignment(['tom', '.'], [('トム', 'tomu'), ('。', '.')], [(0, 0)], 'IPAexGothic')")
    assert missing_glyphs(setup) == ""


def test_every_figure_module_draws_with_fonts_pyplot():
    # a figure that imported pyplot itself would skip the font: only fonts.py may
    offenders = []
    for path in sorted(FIGURES.glob("*.py")):
        if path.name == "fonts.py":
            continue
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Import) and any(a.name == "matplotlib.pyplot" for a in node.names):
                offenders.append(f"{path.name}:{node.lineno}")
            if isinstance(node, ast.ImportFrom) and node.module == "matplotlib" and any(
                    a.name == "pyplot" for a in node.names):
                offenders.append(f"{path.name}:{node.lineno}")
    assert not offenders, f"import pyplot with `plt = pyplot()` (dlhack.figures.fonts): {offenders}"


def test_registering_twice_adds_the_font_once():
    code = ("from matplotlib import font_manager, rcParams\n"
            "from dlhack.figures.fonts import use_japanese_font\n"
            "names = [use_japanese_font(), use_japanese_font()]\n"
            "print(names, sum(f.name == names[0] for f in font_manager.fontManager.ttflist),"
            " list(rcParams['font.family']).count(names[0]))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         timeout=120, check=True).stdout.split()
    assert out == ["['IPAexGothic',", "'IPAexGothic']", "1", "1"], out
