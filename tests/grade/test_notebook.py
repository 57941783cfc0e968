"""Answer cells into a module, from a notebook file or a live namespace (no MPI needed).

The tests exec the modules they build, as the graded ranks import them.
"""
# ruff: noqa: S102
import json
import linecache
import types

import pytest

from dlhack.grade import check, notebook
from tests.grade.gradetools import SOLUTION


def nb_with(*cells, metadata=None):
    return {"cells": list(cells), "metadata": metadata or {}, "nbformat": 4, "nbformat_minor": 5}


def answer(grade_id, source):
    return {"cell_type": "code", "source": source, "outputs": [],
            "metadata": {"nbgrader": {"solution": True, "grade": False, "grade_id": grade_id}}}


def test_magics_become_pass_and_cell_magics_vanish():
    assert notebook.clean_cell("%%writefile x.py\nprint(1)") == ""
    cleaned = notebook.clean_cell("x = 1\n%time y = 2\nif x:\n    !ls\nget_ipython().system('ls')")
    assert cleaned.splitlines() == [
        "x = 1", "pass  # notebook magic, skipped by the grader", "if x:",
        "    pass  # notebook magic, skipped by the grader",
        "pass  # notebook magic, skipped by the grader"]


def test_only_solution_cells_are_taken_and_lines_map_back_to_them():
    nb = nb_with({"cell_type": "code", "source": "import os", "metadata": {}, "outputs": []},
                 answer("first", ["def f():\n", "    return 1\n"]),
                 {"cell_type": "markdown", "source": "text",
                  "metadata": {"nbgrader": {"solution": True}}},
                 answer("second", "def g():\n    return f() + 1"))
    cells = notebook.answer_cells(nb)
    assert [c.label for c in cells] == ["answer cell 'first'", "answer cell 'second'"]
    sub = notebook.build(cells, "x.ipynb")
    namespace = {}
    exec(compile(sub.text, "submission.py", "exec"), namespace)
    assert namespace["g"]() == 2 and "os" not in namespace
    line = sub.text.splitlines().index("    return f() + 1") + 1
    assert sub.where(line) == {"cell": "answer cell 'second'", "line": 2, "code": "return f() + 1"}


def test_a_cell_with_a_syntax_error_is_left_out_alone():
    sub = notebook.build([notebook.Cell("answer cell 'a'", "def a(:\n    pass"),
                          notebook.Cell("answer cell 'b'", "def b():\n    return 2")], "x")
    namespace = {}
    exec(sub.text, namespace)
    assert "b" in namespace and "a" not in namespace
    assert sub.errors[0].startswith("answer cell 'a' was left out: syntax error at line 1")


@pytest.mark.parametrize("content, says", [
    (b'{"cells": [', "invalid JSON at line 1"),
    (b"\xff\xfe\x00", "not UTF-8"),
    (b'{"hello": 1}', "not a Jupyter notebook"),
    (json.dumps(nb_with()).encode(), "has no answer cells"),
])
def test_unreadable_notebooks_say_why(tmp_path, content, says):
    path = tmp_path / "sub.ipynb"
    path.write_bytes(content)
    with pytest.raises(notebook.SubmissionError, match=says):
        notebook.from_notebook(path)


def test_lab_comes_from_metadata_then_file_name_then_folder(tmp_path):
    labs = ["02_collectives", "03_chainermn"]
    meta = {"metadata": {"dlhack": {"lab": "03_chainermn"}}}
    assert notebook.lab_of(tmp_path / "02_collectives.ipynb", meta, labs) == "03_chainermn"
    assert notebook.lab_of(tmp_path / "02_collectives-tanaka.ipynb", {}, labs) == "02_collectives"
    in_folder = tmp_path / "02_collectives" / "tanaka.ipynb"
    assert notebook.lab_of(in_folder, None, labs) == "02_collectives"
    assert notebook.lab_of(tmp_path / "tanaka.ipynb", None, labs) is None


def run_as_cell(code, filename, namespace):
    """Define code the way IPython does: compiled under a made-up name registered in linecache."""
    linecache.cache[filename] = (len(code), None, code.splitlines(True), filename)
    exec(compile(code, filename, "exec"), namespace)


def test_live_answers_are_the_whole_cells_that_defined_them():
    namespace = {"get_ipython": lambda: types.SimpleNamespace(system=print)}
    run_as_cell("import math\nget_ipython().system('ls')\n\ndef helper():\n    return math.pi\n\n"
                "def f():\n    return helper()\n", "/tmp/ipykernel_0/1.py", namespace)
    run_as_cell("x = 5\n", "/tmp/ipykernel_0/2.py", namespace)
    sub, missing = notebook.from_namespace(["f", "g"], namespace)
    assert missing == ["g"]
    module = {}
    exec(sub.text, module)
    assert module["f"]() == pytest.approx(3.14159, rel=1e-5) and "x" not in module


def test_check_without_the_answer_prints_and_returns_zero(capsys):
    assert check("02_collectives", "allreduce_ring", namespace={}) == 0.0
    assert check("02_collectives", "no_such_thing", namespace={}) == 0.0
    out = capsys.readouterr()
    assert "allreduce_ring: not defined yet" in out.out
    assert "has no exercise 'no_such_thing'" in out.out
    assert out.err == ""


def test_check_inside_a_graded_rank_does_nothing(monkeypatch, capsys):
    monkeypatch.setenv("DLHACK_GRADING", "1")
    assert check("02_collectives", "allreduce_ring", namespace={}) == 0.0
    assert capsys.readouterr().out == ""


def test_solution_answer_cells_are_self_contained():
    sub, _ = notebook.from_notebook(SOLUTION)
    namespace = {}
    exec(sub.text, namespace)
    assert {"allreduce_naive", "allreduce_ring", "average_gradients"} <= set(namespace)


SCRIPT = 'import sys\n\nprint("it\'s", sys.argv)  # quotes and a backslash: \\n\n'


def test_a_writefile_answer_cell_becomes_a_file_in_the_submission():
    nb = nb_with(answer("helper", "def helper():\n    return 1"),
                 answer("train_mn", "# MUTANT: a header\n%%writefile train_mn.py\n" + SCRIPT),
                 {"cell_type": "code", "source": "%%writefile demo.py\nprint(2)", "metadata": {},
                  "outputs": []})
    sub = notebook.build(notebook.answer_cells(nb), "x.ipynb")
    namespace = {}
    exec(compile(sub.text, "submission.py", "exec"), namespace)
    assert namespace["WRITTEN_FILES"] == {"train_mn.py": SCRIPT}  # not demo.py: not an answer
    assert namespace["helper"]() == 1 and not sub.errors
    # Line k of the script is a line of submission.py that maps back to its cell.
    line = next(i for i, text in enumerate(sub.text.splitlines(), 1) if "print(" in text)
    assert sub.where(line)["cell"] == "answer cell 'train_mn'"
    assert sub.where(line)["line"] == 4  # the join line, then the script's lines 1..3


def test_the_last_writefile_cell_wins_and_a_broken_script_is_kept_but_noted():
    cells = [notebook.Cell("answer cell 'a'", "%%writefile a.py\nx = 1\n"),
             notebook.Cell("answer cell 'b'", "%%writefile a.py\ndef f(:\n")]
    sub = notebook.build(cells, "x")
    namespace = {}
    exec(sub.text, namespace)
    assert namespace["WRITTEN_FILES"] == {"a.py": "def f(:\n"}
    assert len(sub.errors) == 1
    assert sub.errors[0].startswith("a.py (answer cell 'b') has a syntax error at line 1: ")


def test_writefile_only_counts_as_the_first_code_line():
    assert notebook.writefile("%%writefile t.py\nx = 1\n") == ("t.py", "x = 1\n")
    assert notebook.writefile("# c\n\n%%writefile -a t.py\nx\n") == ("t.py", "x\n")
    assert notebook.writefile("x = 1\n%%writefile t.py\n") is None
    assert notebook.writefile("%%writefile notes.txt\nhello\n") is None


@pytest.mark.parametrize("typed", [True, False])
def test_a_live_kernel_gives_the_last_writefile_cell_run(typed):
    def as_run(text):  # IPython's _ih holds the transformed cell; raw history holds it as typed
        if typed:
            return "%%writefile train_mn.py\n" + text
        return f"get_ipython().run_cell_magic('writefile', 'train_mn.py', {text!r})\n"

    namespace = {"_ih": ["", as_run("old = 1\n"), "x = 2", as_run(SCRIPT), "dlhack.grade.check()"]}
    sub, missing = notebook.from_namespace(["train_mn", "other"], namespace)
    assert missing == ["other"]
    run = {}
    exec(sub.text, run)
    assert run["WRITTEN_FILES"] == {"train_mn.py": SCRIPT}
    assert notebook.from_namespace(["train_mn"], {"_ih": ["x = 1"]})[1] == ["train_mn"]
