"""What a graded rank checks beside learner code: that the functions a test's verdict rests on
were not replaced while the test ran.

    guard = Guard(); guard.take(MODULES)   # in pytest_in_rank.py, before learner code is imported
    guard.take_tests(root)                 # once pytest has collected the test (its modules)
    changed = guard.changed()              # after the test: ["numpy.isclose", ...]

Learner code runs in the same process as the test that checks it, so it could make a wrong
answer pass by replacing what the check calls: ``numpy.isclose`` or ``numpy.allclose``, a
builtin such as ``all`` or ``isinstance``, a helper of the lab's tests (``labtools.compare``, a
reference function), pytest's own machinery, or the grader's recorder. A snapshot taken before
the learner's code is imported holds every callable of those modules (and of the classes and
functions the tests define, code objects included); afterwards each must still be the very same
object. A rank where one is not fails its run as tampered, naming what was replaced.

Since issue 24 a pass is decided outside the rank (checker.py): this snapshot only names
tampering. It raises the bar; it is not a wall (see the threat model in the README): code in
the same process can also change the snapshot itself, given enough effort (``ctypes``, ``gc``).
Only the standard library is used: ``pytest_in_rank.py`` loads this file by its path.
"""
import sys
import types

# Modules whose callables decide whether a test passes: comparisons, builtins, pytest's runner.
MODULES = ("builtins", "math", "operator", "functools", "json", "os", "numpy",
           "numpy.core.numeric", "numpy.core.fromnumeric", "numpy.core.multiarray",
           "numpy.linalg", "numpy.testing", "numpy.testing._private.utils", "pytest",
           "_pytest.outcomes", "_pytest.runner", "_pytest.python", "_pytest.main",
           "_pytest.reports", "_pytest.fixtures", "_pytest.hookspec", "pluggy")
FUNCTION_PARTS = ("__code__", "__defaults__", "__kwdefaults__")


def _watched(value):
    return callable(value) or isinstance(value, types.ModuleType)


class Guard:
    """Snapshots of objects, compared by identity afterwards."""

    def __init__(self):
        self._held = []  # (label, owner, name, object): what owner.name must still be

    def _keep(self, label, owner, name, value):
        self._held.append((label, owner, name, value))

    def take(self, names=MODULES):
        """Snapshot every callable (and submodule) of the modules in ``names`` that are loaded."""
        for name in names:
            module = sys.modules.get(name)
            if module is None:
                continue
            self._keep(f"sys.modules[{name!r}]", sys.modules, name, module)
            for attr, value in list(vars(module).items()):
                if _watched(value):
                    self._keep(f"{name}.{attr}", module, attr, value)

    def take_object(self, label, obj):
        """Snapshot a class's methods, or a function's code and defaults."""
        if isinstance(obj, type):
            for attr, value in list(vars(obj).items()):
                self._keep(f"{label}.{attr}", obj, attr, value)
                if isinstance(value, types.FunctionType):
                    self.take_object(f"{label}.{attr}", value)
        elif isinstance(obj, types.FunctionType):
            for part in FUNCTION_PARTS:
                self._keep(f"{label}.{part}", obj, part, getattr(obj, part))

    def take_tests(self, root):
        """Snapshot everything the test modules under ``root`` define (call after collection)."""
        root = str(root).rstrip("/") + "/"
        for name, module in list(sys.modules.items()):
            path = getattr(module, "__file__", None) or ""
            if not path.startswith(root):
                continue
            self._keep(f"sys.modules[{name!r}]", sys.modules, name, module)
            for attr, value in list(vars(module).items()):
                if attr.startswith("__") or not _watched(value):
                    continue  # plain values may change as a test runs: caches, counters
                self._keep(f"{name}.{attr}", module, attr, value)
                if getattr(value, "__module__", None) == name:
                    self.take_object(f"{name}.{attr}", value)

    def changed(self):
        """Labels of what no longer is the object snapshotted, in the order they were taken."""
        found = []
        for label, owner, name, value in self._held:
            if isinstance(owner, (dict, type)):  # a class's own entry, as vars() showed it
                now = (owner if isinstance(owner, dict) else vars(owner)).get(name)
            else:
                now = getattr(owner, name, None)
            if now is not value:
                found.append(label)
        return list(dict.fromkeys(found))

    def __len__(self):
        return len(self._held)
