"""The house: the package's rooms, read from the source itself.

- every module imports, and the import graph (module-level and function-level imports alike,
  read with ``ast``) has no circles;
- no arrow runs back up: a room imports only rooms below it in ``LAYERS``;
- no module is over 300 lines;
- no module or room is named like a standard-library module (a script run by its path puts its
  folder first on ``sys.path``, where ``profile.py`` would shadow the one ``cProfile`` imports);
- the README's library map (made by ``dlhack.tools.libmap``) is current: it names every module;
- the scripts run by their path (in a rank, before its code) import no dlhack module, nor do the
  files they load by path; only the jobs room reads how a rank ended from its run files.
"""
import ast
import importlib
import re
import sys

import pytest

from tests.support import ROOT

SRC = ROOT / "src"
PACKAGE = SRC / "dlhack"
MAX_LINES = 300
# Run by their path inside a rank, never imported: they must not import dlhack (and Chainer).
STANDALONE = ("dlhack.jobs.rankwrap", "dlhack.grade.pytest_in_rank")
# Loaded by their path from beside a standalone script, or from a graded rank's adapter
# (graded/conftest.py): the standard library only.
LOADED_BY_PATH = ("dlhack.jobs.mpiexec", "dlhack.jobs.runfiles", "dlhack.grade.guard",
                  "dlhack.grade.stopearly")

# Rooms from the bottom up. A module may import its own room and the rooms listed before it.
# The package root (its ``%load_ext`` hook) and the ``dlhack`` command are entry points on top.
LAYERS = [
    ("dlhack.atomic",),
    ("dlhack.corpus",),
    ("dlhack.model",),
    ("dlhack.bleu",),
    ("dlhack.parallel",),
    ("dlhack.evaluation", "dlhack.report", "dlhack.snapshot"),
    ("dlhack.step_profile",),
    ("dlhack.train", "dlhack.translate"),
    ("dlhack.figures",),
    ("dlhack.jobs",),
    ("dlhack.tools",),
    ("dlhack.grade", "dlhack.bench"),
    ("dlhack", "dlhack.cli"),
]


def module_name(path):
    rel = path.relative_to(SRC).with_suffix("")
    parts = rel.parts[:-1] if rel.name == "__init__" else rel.parts
    return ".".join(parts)


MODULES = {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def room(name):
    """The LAYERS index of module ``name`` (its longest matching room)."""
    best = None
    for index, rooms in enumerate(LAYERS):
        for prefix in rooms:
            inside = name == prefix or name.startswith(prefix + ".")
            if inside and (best is None or len(prefix) > len(best[1])):
                best = (index, prefix)
    assert best is not None, f"{name} belongs to no room in LAYERS: add it there"
    return best


def imports(name):
    """The dlhack modules that module ``name`` imports, anywhere in its source."""
    path = MODULES[name]
    tree = ast.parse(path.read_text(), filename=str(path))
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            targets = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                base = ".".join(package.split(".")[: len(package.split(".")) - node.level + 1]
                                + ([base] if base else []))
            # `from dlhack.corpus import grammar` imports a module; `import X` names only.
            targets = [f"{base}.{a.name}" if f"{base}.{a.name}" in MODULES else base
                       for a in node.names]
        else:
            continue
        found.update(t for t in targets if t == "dlhack" or t.startswith("dlhack."))
    found = {t if t in MODULES else t.rpartition(".")[0] for t in found}
    found.discard(name)
    return found


GRAPH = {name: imports(name) for name in MODULES}


@pytest.mark.parametrize("name", sorted(MODULES))
def test_every_module_imports(name):
    if name in STANDALONE:
        pytest.skip("a standalone script, run by its path (it imports no dlhack module)")
    importlib.import_module(name)


def test_no_import_circles():
    state, path = {}, []

    def visit(node):
        state[node] = "open"
        path.append(node)
        for target in sorted(GRAPH[node]):
            if state.get(target) == "open":
                cycle = path[path.index(target):] + [target]
                pytest.fail("import circle: " + " -> ".join(cycle))
            if target not in state:
                visit(target)
        path.pop()
        state[node] = "done"

    for name in sorted(GRAPH):
        if name not in state:
            visit(name)


def test_no_arrow_runs_back_up():
    upward = []
    for name, targets in GRAPH.items():
        here = room(name)
        for target in targets:
            there = room(target)
            # A package's __init__ may re-export its own modules; parents import children.
            if there[0] > here[0]:
                upward.append(f"{name} ({here[1]}) imports {target} ({there[1]})")
    assert not upward, "imports that run back up:\n" + "\n".join(sorted(upward))


def test_standalone_scripts_import_no_dlhack():
    for name in STANDALONE:
        assert not GRAPH[name], f"{name} is run by its path and must not import {GRAPH[name]}"


@pytest.mark.parametrize("name", LOADED_BY_PATH)
def test_files_loaded_by_path_use_the_standard_library_only(name):
    tree = ast.parse(MODULES[name].read_text())
    tops = {alias.name.split(".")[0] for node in ast.walk(tree) if isinstance(node, ast.Import)
            for alias in node.names}
    tops |= {node.module.split(".")[0] for node in ast.walk(tree)
             if isinstance(node, ast.ImportFrom) and node.module and not node.level}
    assert tops <= sys.stdlib_module_names, f"{name} imports {sorted(tops - sys.stdlib_module_names)}"


# A run file a rank leaves about its end, named as runfiles.run_file/read take it.
END_FILE = re.compile(r"""(run_file|read)\([^)]*["'](crash|stack|done|pid)["']""")


def test_only_the_jobs_room_reads_how_a_rank_ended():
    """One classifier (jobs/endings.py) of how each rank ended; the rest word what it says."""
    readers = [name for name, path in MODULES.items()
               if not name.startswith("dlhack.jobs") and END_FILE.search(path.read_text())]
    assert not readers, f"read a rank's end from its run files outside dlhack.jobs: {readers}"


@pytest.mark.parametrize("name", sorted(MODULES))
def test_module_is_short(name):
    lines = len(MODULES[name].read_text().splitlines())
    assert lines <= MAX_LINES, f"{MODULES[name].relative_to(ROOT)} has {lines} lines (> {MAX_LINES})"


def test_no_module_shadows_the_standard_library():
    shadows = [p.relative_to(ROOT).as_posix() for p in PACKAGE.rglob("*")
               if (p.suffix == ".py" or p.is_dir()) and p.stem in sys.stdlib_module_names]
    assert not shadows, f"named like a standard-library module: {shadows}"


def test_readme_library_map_is_current():
    from dlhack.tools import libmap

    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert libmap.replace_map(text, libmap.make_map()) == text, (
        "README.md's library map is stale: run python -m dlhack.tools.libmap --write")
    listed = set(re.findall(r"^  (\S+\.py) ", text, flags=re.MULTILINE))
    actual = {p.relative_to(PACKAGE).as_posix() for p in PACKAGE.rglob("*.py")}
    assert listed == actual, f"missing {sorted(actual - listed)}, extra {sorted(listed - actual)}"
