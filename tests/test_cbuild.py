"""dlhack.cbuild: a C file built into a shared library that loads, or the compiler's reason."""
import ctypes
import shutil
import stat

import pytest

from dlhack.cbuild import shared_library

CC = shutil.which("cc") or shutil.which("gcc")
pytestmark = pytest.mark.skipif(CC is None, reason="no C compiler")


def test_a_library_is_built_loads_and_leaves_no_temporary_file(tmp_path):
    source = tmp_path / "twice.c"
    source.write_text("long twice(long x) { return 2 * x; }\n")
    dest = tmp_path / "lib" / "libtwice.so"
    assert shared_library([CC, "-O2"], source, dest, mode=0o755) is None
    assert ctypes.CDLL(str(dest)).twice(21) == 42
    assert stat.S_IMODE(dest.stat().st_mode) == 0o755
    assert sorted(p.name for p in dest.parent.iterdir()) == ["libtwice.so"]


def test_a_failed_build_says_why_and_leaves_nothing(tmp_path):
    source = tmp_path / "broken.c"
    source.write_text("long twice(long x) { return 2 * y; }\n")
    dest = tmp_path / "libbroken.so"
    why = shared_library([CC], source, dest, tail=200)
    assert why.startswith(f"{CC} failed:") and "broken.c:1" in why and len(why) < 260
    assert sorted(p.name for p in tmp_path.iterdir()) == ["broken.c"]


def test_a_missing_compiler_says_so(tmp_path):
    source = tmp_path / "empty.c"
    source.write_text("")
    why = shared_library([str(tmp_path / "no-cc")], source, tmp_path / "lib.so")
    assert "could not run" in why and not (tmp_path / "lib.so").exists()
