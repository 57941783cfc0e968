"""The light stand-in for Chainer's import-time check: in place when dlhack imports Chainer,
without numpy.distutils and pkg_resources, and warning where Chainer's own check warns."""
import importlib.util
import subprocess
import sys
import warnings
from pathlib import Path

import chainer
import pytest

from dlhack import chainer_check

CASES = {  # name: (dependencies, how many warnings Chainer's own check gives)
    "in range": ([{"name": "NumPy", "packages": ["numpy"], "specifier": ">=1.0", "help": "h"}], 0),
    "out of range": ([{"name": "NumPy", "packages": ["numpy"], "specifier": ">=99",
                       "help": "h"}], 1),
    "absent": ([{"name": "X", "packages": ["dlhack-no-such-package"], "specifier": ">=1",
                 "help": "h"}], 0),
    "two names": ([{"name": "Two", "packages": ["numpy", "pytest"], "specifier": ">=1.0",
                    "help": "h"}], 1),
    "two names, one out of range": ([{"name": "Two", "packages": ["numpy", "pytest"],
                                      "specifier": "<1.99", "help": "h"}], 2),
}


def warnings_of(check, dependencies, monkeypatch):
    """The warnings ``check()`` gives with Chainer's optional dependencies replaced."""
    monkeypatch.setattr(chainer._version, "_optional_dependencies", dependencies)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        check()
    return [str(w.message) for w in caught]


def chainers_own_check():
    """``chainer/_environment_check.py`` itself, loaded by its path (it imports
    numpy.distutils and pkg_resources: their deprecation warnings are not ours)."""
    path = Path(chainer.__file__).parent / "_environment_check.py"
    spec = importlib.util.spec_from_file_location("chainer_own_environment_check", path)
    module = importlib.util.module_from_spec(spec)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        spec.loader.exec_module(module)
    return module._check_optional_dependencies


def test_dlhack_imports_chainer_without_distutils_and_pkg_resources():
    code = ("import sys, dlhack, chainer; from dlhack import chainer_check; "
            "print(sys.modules[chainer_check.NAME].check is chainer_check.check, "
            "'numpy.distutils' in sys.modules, 'pkg_resources' in sys.modules)")
    out = subprocess.run([sys.executable, "-W", "error::DeprecationWarning", "-c", code],
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["True", "False", "False"], out.stderr


@pytest.mark.parametrize("case", CASES)
def test_warns_where_chainers_own_check_warns(case, monkeypatch):
    dependencies, expected = CASES[case]
    ours = warnings_of(chainer_check.check, dependencies, monkeypatch)
    theirs = warnings_of(chainers_own_check(), dependencies, monkeypatch)
    assert len(theirs) == expected  # the cases say what Chainer does
    assert len(ours) == expected, ours


def test_names_the_package_and_the_range():
    dependencies, _ = CASES["out of range"]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        chainer_check.check_optional_dependencies(dependencies)
    assert "numpy" in str(caught[0].message) and ">=99" in str(caught[0].message)


def test_version_mismatch_warning_can_be_turned_off(monkeypatch):
    monkeypatch.setenv("CHAINER_WARN_VERSION_MISMATCH", "0")
    assert warnings_of(chainer_check.check, CASES["out of range"][0], monkeypatch) == []


def test_install_leaves_an_imported_chainer_alone(monkeypatch):
    before = sys.modules[chainer_check.NAME]
    assert chainer_check.install() is False  # chainer is imported in this process
    assert sys.modules[chainer_check.NAME] is before


def test_without_packaging_it_says_it_could_not_check(monkeypatch):
    monkeypatch.setitem(sys.modules, "packaging.specifiers", None)  # import fails
    dependencies, _ = CASES["in range"]
    messages = warnings_of(chainer_check.check, dependencies, monkeypatch)
    assert len(messages) == 1 and "could not check numpy" in messages[0]
