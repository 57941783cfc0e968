"""The house: the package's rooms, read from the source itself.

- every module imports, and the import graph (module-level and function-level imports alike,
  read with ``ast``) has no circles;
- no arrow runs back up: a room imports only rooms below it in ``LAYERS``;
- no module is over 300 lines;
- no module or room is named like a standard-library module (a script run by its path puts its
  folder first on ``sys.path``, where ``profile.py`` would shadow the one ``cProfile`` imports);
- the README's library map (made by ``dlhack.tools.libmap``) is current: it names every module;
- the scripts run by their path (in a rank, before its code) import no dlhack module, nor do the
  files they load by path; only the jobs room reads how a rank ended from its run files;
- no function in ``src`` is over 60 lines (``LONG_FUNCTIONS`` names any exception, and why);
- each module's tests are where a newcomer looks: ``tests/<room>/test_<module>.py`` (a top-level
  module's in ``tests/test_<module>.py``), or the module is in ``NO_TEST_FILE``, which says where;
- no helper is copied between test modules (the same function twice, by ``ast``), and the
  checkout's root is computed once, in tests/support.py;
- every test or graded path that the docs, lessons and sources name exists.
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
MAX_FUNCTION_LINES = 60
LONG_FUNCTIONS = {}  # "dlhack.module.function": why it is longer (none today)
# Where the tests of a module without tests/<room>/test_<module>.py are, and why not there.
# Every package's __init__ is exempt as well: a room's docstring and what it re-exports.
NO_TEST_FILE = {
    # A render's stamp and its outputs' cleaning: tested on the committed lessons' renders.
    "dlhack.tools.outputs": "tests/course/test_renders.py",
    "dlhack.tools.renderstamp": "tests/course/test_renders.py",
    # The lessons' figures: drawn when tests/course/test_notebooks.py runs every lesson, and
    # kept current by tests/course/test_rendered.py.
    "dlhack.figures.collectives": "tests/course/test_notebooks.py",
    "dlhack.figures.debugging": "tests/course/test_notebooks.py",
    "dlhack.figures.pipelines": "tests/course/test_notebooks.py",
    "dlhack.figures.scaling": "tests/course/test_notebooks.py",
    "dlhack.figures.syncasync": "tests/course/test_notebooks.py",
    "dlhack.figures.translator": "tests/course/test_notebooks.py",
    # Word tables only: every row is parsed into the lexicon there.
    "dlhack.corpus.grammar": "tests/corpus/test_phrases.py",
    # Run by its path inside every graded rank: each grading runs it; what it records is read
    # in the batch tests.
    "dlhack.grade.pytest_in_rank": "tests/grade/test_batch.py",
    # The checker's process, run by its path: tested through checker.py, which starts it.
    "dlhack.grade.check_outside": "tests/grade/test_checker.py",
    # The base of the multi-node optimizers: tested through them (forwarding, the broadcast).
    "dlhack.parallel.wrapper": "tests/parallel/test_optimizer.py",
    # Minutes of training on the real corpus (`make bench`); its time budget is bench/training's.
    "dlhack.bench.corpus": "tests/bench/test_training.py",
}
# Run by their path inside a rank, never imported: they must not import dlhack (and Chainer).
STANDALONE = ("dlhack.jobs.rankwrap", "dlhack.grade.pytest_in_rank", "dlhack.grade.check_outside")
# Loaded by their path from beside a standalone script, or from a graded rank's adapter
# (graded/conftest.py): the standard library only.
LOADED_BY_PATH = ("dlhack.jobs.mpiexec", "dlhack.jobs.runfiles", "dlhack.grade.guard",
                  "dlhack.grade.stopearly", "dlhack.grade.recorder", "dlhack.grade.traffic")
# (grade/obsformat.py is loaded by its path too, and imports numpy besides.)

# Rooms from the bottom up. A module may import its own room and the rooms listed before it.
# The package root (its ``%load_ext`` hook) and the ``dlhack`` command are entry points on top.
LAYERS = [
    ("dlhack.atomic", "dlhack.cbuild", "dlhack.chainer_check"),
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


def test_no_function_is_too_long():
    long = []
    for name, path in MODULES.items():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES and f"{name}.{node.name}" not in LONG_FUNCTIONS:
                    long.append(f"{name}.{node.name}: {lines} lines")
    assert not long, f"over {MAX_FUNCTION_LINES} lines (split them, or say why in " \
                     f"LONG_FUNCTIONS): {long}"


def home_of_tests(name):
    """``dlhack.grade.report``: tests/grade/test_report.py; ``dlhack.bleu``: tests/test_bleu.py."""
    *room, module = name.split(".")[1:]
    return ROOT.joinpath("tests", *room, f"test_{module}.py")


@pytest.mark.parametrize("name", sorted(n for n in MODULES if MODULES[n].name != "__init__.py"))
def test_each_module_has_its_tests_where_a_newcomer_looks(name):
    if name in NO_TEST_FILE:
        assert not home_of_tests(name).exists(), f"{name} has a test file: take it off NO_TEST_FILE"
        assert (ROOT / NO_TEST_FILE[name]).is_file(), NO_TEST_FILE[name]
        return
    assert home_of_tests(name).is_file(), (
        f"{name}'s tests belong in {home_of_tests(name).relative_to(ROOT)} (or name where they "
        f"are, and why, in NO_TEST_FILE)")


def test_no_exemption_names_a_module_that_is_gone():
    assert set(NO_TEST_FILE) <= set(MODULES), sorted(set(NO_TEST_FILE) - set(MODULES))


TESTS = sorted(p for p in (ROOT / "tests").rglob("*.py") if "submissions" not in p.parts)


def definitions(tree):
    """Module-level functions and methods (a closure inside a test is that test's own)."""
    for node in tree.body:
        if isinstance(node, ast.ClassDef):
            yield from (n for n in node.body if isinstance(n, ast.FunctionDef))
        elif isinstance(node, ast.FunctionDef):
            yield node


def shape(function):
    """The function's arguments and body without its docstring, as ``ast`` dumps them."""
    body = function.body
    if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant):
        body = body[1:]
    return ast.dump(function.args) + ast.dump(ast.Module(body=body, type_ignores=[]))


def test_no_helper_is_copied_between_test_modules():
    """The same name and body twice, or a body of three statements or more under two names:
    one of them belongs in tests/support.py or its room's helper module."""
    seen, copies = {}, []
    for path in TESTS:
        for function in definitions(ast.parse(path.read_text(encoding="utf-8"))):
            where = f"{path.relative_to(ROOT)}::{function.name}"
            keys = [(function.name, shape(function))]
            if len(function.body) >= 3:
                keys.append(("", shape(function)))
            for key in keys:
                if key in seen and seen[key].split("::")[0] != where.split("::")[0]:
                    copies.append(f"{seen[key]} ~ {where}")
                seen.setdefault(key, where)
    assert not copies, "helpers copied between test modules:\n" + "\n".join(sorted(set(copies)))


def test_the_root_is_computed_once():
    computed = [p.relative_to(ROOT).as_posix() for p in TESTS
                if re.search(r"__file__\)\.resolve\(\)\.parents\[", p.read_text())]
    assert computed == ["tests/support.py"], f"import ROOT from tests/support.py: {computed}"


# A test or graded path as the docs name it (templates such as graded/NN_name/ are not paths).
NAMED_PATH = re.compile(r"\b(?:tests|graded)/[\w/.-]*\w\.(?:py|md)\b")


def test_every_test_path_the_docs_name_exists():
    places = [ROOT / "README.md", ROOT / "GLOSSARY.md", *ROOT.glob("*/README.md"),
              *(ROOT / "mentors").glob("*.md"), *(ROOT / "lessons").glob("*.ipynb"),
              *(ROOT / "jobs").glob("*"), *PACKAGE.rglob("*.py"), *TESTS]
    missing = sorted({f"{place.relative_to(ROOT)}: {found}" for place in places if place.is_file()
                      for found in NAMED_PATH.findall(place.read_text(encoding="utf-8"))
                      if not (ROOT / found).exists() and "NN_" not in found
                      and not re.search(r"[A-Z]{4}", found)})
    assert not missing, "paths that do not exist:\n" + "\n".join(missing)
