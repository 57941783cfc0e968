"""The README's library map (dlhack.tools.libmap): one line per module, in reading order, put
between its markers; ``--check`` fails on a stale copy. (That README.md's own map is current is
tests/house/test_layout.py's.)"""
from dlhack.tools import libmap
from tests.support import ROOT


def test_the_map_names_every_module_once_in_reading_order():
    lines = libmap.make_map()
    names = [line.split()[0] for line in lines[1:-1]]
    modules = sorted(p.relative_to(libmap.PACKAGE).as_posix()
                     for p in libmap.PACKAGE.rglob("*.py"))
    assert sorted(names) == modules and len(names) == len(set(names))
    assert names.index("corpus/__init__.py") < names.index("model/__init__.py") < \
        names.index("bleu.py") < names.index("parallel/__init__.py") < names.index("grade/cli.py")


def test_check_fails_on_a_stale_readme_and_write_mends_it(tmp_path, capsys):
    readme = tmp_path / "README.md"
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    readme.write_text(text.replace("  atomic.py ", "  atomic_old.py ", 1), encoding="utf-8")
    assert libmap.main(["--check", "--readme", str(readme)]) == 1
    assert "the library map is stale" in capsys.readouterr().out
    assert libmap.main(["--write", "--readme", str(readme)]) == 0
    assert libmap.main(["--check", "--readme", str(readme)]) == 0
    assert readme.read_text(encoding="utf-8") == text
