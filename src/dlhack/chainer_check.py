"""Chainer's import-time environment check, without ``numpy.distutils`` and ``pkg_resources``.

    from dlhack import chainer_check
    chainer_check.install()      # before the process's first ``import chainer``
    import chainer

``dlhack/__init__.py`` does this, so every process that imports dlhack (a training rank, a
benchmark's worker, a notebook's kernel) imports Chainer this way.

Why: ``import chainer`` runs ``chainer._environment_check.check()``, and that module imports
``numpy.distutils.system_info`` (for a test of NumPy's BLAS on macOS only) and ``pkg_resources``
(to compare the installed CuPy and iDeep with the versions this Chainer supports). The two cost
every process about 9 MB of resident memory and half a second or more, for nothing on Linux,
and print two deprecation warnings. ``install()`` puts a module of that name in
``sys.modules`` first, whose ``check()`` does the same version check with
``importlib.metadata`` (and ``packaging``, only when one of those packages is installed), and
warns as Chainer would: a version outside the supported range (unless
``CHAINER_WARN_VERSION_MISMATCH=0``), or one library installed under two package names. On
macOS, where the BLAS test matters, Chainer's own check stays.

Costs: a lookup of each package name Chainer lists (CuPy's 16, iDeep's 1) at import, about a
millisecond. The Python 3.5.0 refusal of Chainer's check is left out: this project needs 3.11.
"""
import importlib.metadata
import os
import sys
import types
import warnings

NAME = "chainer._environment_check"  # the module ``chainer/__init__.py`` imports and runs


def installed_version(package):
    """The installed version of distribution ``package``, or None."""
    try:
        return importlib.metadata.version(package)
    except importlib.metadata.PackageNotFoundError:
        return None


def _specifier(text):
    """``packaging``'s ``SpecifierSet(text)``, or None without packaging (imported only when an
    optional dependency is installed: none is, most of the time)."""
    try:
        from packaging.specifiers import SpecifierSet
    except ImportError:
        return None
    return SpecifierSet(text)


def check_optional_dependencies(dependencies, strict=True):
    """Warn about each optional dependency (Chainer's ``_version._optional_dependencies``:
    dicts of name, packages, specifier, help) installed at a version outside its specifier
    (when ``strict``), or installed under more than one of its package names."""
    for dep in dependencies:
        found = [(pkg, v) for pkg in dep["packages"] if (v := installed_version(pkg))]
        if strict and found:
            supported = _specifier(dep["specifier"])
            for pkg, version in found:
                if supported is None:
                    warnings.warn(f"could not check {pkg} {version} against {dep['specifier']}: "
                                  "the packaging package is missing")
                elif not supported.contains(version, prereleases=True):
                    warnings.warn(
                        f"{dep['name']} ({pkg}) {version} may not work with this Chainer, which "
                        f"supports {pkg}{dep['specifier']}: pip install '{pkg}{dep['specifier']}'"
                        f" (see {dep['help']})")
        if len(found) > 1:
            warnings.warn(
                f"{dep['name']} is installed under {len(found)} package names "
                f"({', '.join(pkg for pkg, _ in found)}): keep one (pip uninstall the others)")


def check():
    """What ``chainer/__init__.py`` calls: the optional dependencies' version check."""
    from chainer import _version  # Chainer is half imported here; its _version module is not

    strict = os.environ.get("CHAINER_WARN_VERSION_MISMATCH", "1") == "1"
    check_optional_dependencies(_version._optional_dependencies, strict)


def install():
    """Put this check in the place of Chainer's before Chainer is imported; returns whether it
    did (not when Chainer or its check is imported already, nor on macOS)."""
    if "chainer" in sys.modules or NAME in sys.modules or sys.platform == "darwin":
        return False
    module = types.ModuleType(NAME, "dlhack.chainer_check in Chainer's place (see there).")
    module.check = check
    sys.modules[NAME] = module
    return True
