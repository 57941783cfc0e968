"""The compiled elementwise kernels: built where a C compiler is, the numpy path where not."""
import ctypes
import os
import subprocess
import sys

import numpy as np
import pytest

from dlhack.model import ckernels
from dlhack.model.ckernels import address, compiler, describe, kernels, load


def test_a_c_compiler_here_gives_the_compiled_path(monkeypatch):
    monkeypatch.delenv("DLHACK_KERNELS", raising=False)
    if compiler() is None:
        pytest.skip("no C compiler here: the numpy path runs (deploy/system-packages.sh installs gcc)")
    assert kernels() is not None, describe()
    assert describe().startswith("compiled C")


def test_forced_numpy_path(monkeypatch):
    monkeypatch.setenv("DLHACK_KERNELS", "numpy")
    assert kernels() is None
    assert describe() == "numpy (forced by DLHACK_KERNELS=numpy)"


def test_no_compiler_or_a_failing_one_falls_back_with_a_reason(monkeypatch, tmp_path):
    monkeypatch.setenv("CC", str(tmp_path / "no-such-cc"))
    monkeypatch.setenv("PATH", str(tmp_path))
    assert compiler() is None
    lib, why = load(cache=tmp_path)
    assert lib is None and why.startswith("numpy (no C compiler")
    lib, why = load("/bin/false", cache=tmp_path)
    assert lib is None and "did not build" in why and "/bin/false failed" in why
    assert not list(tmp_path.glob("*.so"))


def test_builds_once_into_the_cache_named_by_the_source(tmp_path):
    cc = compiler()
    if cc is None:
        pytest.skip("no C compiler here")
    lib, how = load(cc, cache=tmp_path)
    assert lib is not None and how.startswith("compiled C"), how
    built = list(tmp_path.glob("libdlhack_elementwise-*.so"))
    assert len(built) == 1
    assert ckernels.library_path(cc, ckernels.FLAGS[0], tmp_path) == built[0]
    stamp = built[0].stat().st_mtime_ns
    assert load(cc, cache=tmp_path)[0] is not None
    assert built[0].stat().st_mtime_ns == stamp  # found, not built again


def compiled():
    lib = kernels()
    if lib is None:
        pytest.skip(describe())
    return lib


def test_scatter_add_rows_equals_add_at():
    lib, rng = compiled(), np.random.RandomState(0)
    index = rng.randint(0, 5, size=40).astype(np.int64)  # repeated rows add up
    rows = rng.randn(40, 7).astype(np.float32)
    out, want = np.zeros((5, 7), np.float32), np.zeros((5, 7), np.float32)
    np.add.at(want, index, rows)
    lib.scatter_add_rows(40, 7, address(index), address(rows), address(out))
    np.testing.assert_allclose(out, want, rtol=1e-5, atol=1e-6)


def test_adam_update_equals_the_formula():
    lib, rng = compiled(), np.random.RandomState(1)
    p, g, m, v = (rng.randn(1000).astype(np.float32) for _ in range(4))
    v = np.abs(v)
    m_want = m + 0.1 * (g - m)
    v_want = v + 0.001 * (g * g - v)
    p_want = p - 0.01 / (np.sqrt(v_want) + 1e-8) * m_want
    lib.adam_update(1000, address(p), address(g), address(m), address(v), 0.1, 0.001, 0.01,
                    1e-8)
    for got, want in ((m, m_want), (v, v_want), (p, p_want)):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_signatures_cover_every_function_of_the_source():
    source = ckernels.SOURCE.read_text()
    exported = {line.split("(")[0].split()[-1] for line in source.splitlines()
                if line.startswith("void ")}
    assert exported == set(ckernels.SIGNATURES)
    assert all(t in (ctypes.c_long, ctypes.c_void_p, ctypes.c_float)
               for ts in ckernels.SIGNATURES.values() for t in ts)


def test_a_counted_grade_never_loads_the_per_user_cache(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert ckernels.cache_dir() == tmp_path / "dlhack"
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    private = ckernels.cache_dir()
    assert private != tmp_path / "dlhack" and not str(private).startswith(str(tmp_path))
    assert private.is_dir() and ckernels.cache_dir() == private


def test_a_counted_grade_leaves_no_library_behind(tmp_path):
    """Every graded process builds into a folder of its own: it goes when the process ends."""
    code = ("from dlhack.model import ckernels; lib = ckernels.kernels(); "
            "print(ckernels.cache_dir()); print(lib is not None)")
    env = dict(os.environ, NBGRADER_EXECUTION="autograde", TMPDIR=str(tmp_path))
    env.pop(ckernels.FORCE, None)
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    folder, built = proc.stdout.split()
    assert folder.startswith(str(tmp_path)) and built == str(ckernels.compiler() is not None)
    assert list(tmp_path.iterdir()) == []


def test_loading_the_kernels_keeps_the_process_s_subnormal_numbers(tmp_path):
    """A library built with -ffast-math would flush subnormals to zero in the whole process
    once loaded (and numpy would warn about it on stderr)."""
    code = ("import numpy as np; from dlhack.model import ckernels; "
            "assert ckernels.kernels() is not None, ckernels.describe(); "
            "print(np.float64(5e-324) * 1.0 > 0, np.float32(1e-45) * np.float32(1) > 0); "
            "np.finfo(np.float64)")
    env = dict(os.environ, XDG_CACHE_HOME=str(tmp_path))
    env.pop(ckernels.FORCE, None)
    if compiler() is None:
        pytest.skip("no C compiler")
    proc = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True,
                          timeout=300, check=False)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.split() == ["True", "True"] and proc.stderr == ""
