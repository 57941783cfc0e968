"""The check cell as a learner and as nbgrader see it: lines as runs end, and a value that only
nbgrader gets to read (see the module docstring of dlhack.grade.checkcell for why)."""
import linecache

import nbformat
import pytest
from IPython.core.interactiveshell import InteractiveShell
from nbgrader.utils import determine_grade

from dlhack.grade import check, checkcell, notebook
from tests.grade.gradetools import SOLUTION


def graded_cell(value_output, points=3):
    """A check cell as nbgrader finds it after executing the notebook."""
    cell = nbformat.v4.new_code_cell('dlhack.grade.check("02_collectives", "allreduce_naive")')
    cell.metadata["nbgrader"] = {"grade": True, "solution": False, "locked": True,
                                 "grade_id": "check_allreduce_naive", "points": points}
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text="feedback\n")]
    if value_output is not None:
        cell.outputs.append(nbformat.v4.new_output("execute_result", data=value_output,
                                                   execution_count=1))
    return cell


@pytest.fixture
def shell():
    return InteractiveShell.instance()


def test_in_a_learners_notebook_the_value_is_not_displayed(shell, monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    value = check("02_collectives", "allreduce_naive", namespace={})
    assert value == 0.0 and isinstance(value, checkcell.Points)
    assert shell.display_formatter.format(value) == ({}, {})  # no Out[..] under the feedback


@pytest.mark.parametrize("mode", ["autograde", "validate"])
def test_under_nbgrader_the_value_is_the_score_nbgrader_reads(shell, monkeypatch, mode):
    monkeypatch.setenv("NBGRADER_EXECUTION", mode)
    value = check("02_collectives", "allreduce_naive", namespace={})
    assert type(value) is float
    data, _ = shell.display_formatter.format(value)
    assert determine_grade(graded_cell(data)) == (0.0, 3.0)  # not done: no points
    # Why the value must be there: a graded cell with no value at all gets full marks.
    assert determine_grade(graded_cell(None)) == (3.0, 3.0)


def test_a_check_prints_a_line_as_each_run_ends(capsys):
    submission, _ = notebook.from_notebook(SOLUTION)
    namespace, filename = {}, "/tmp/ipykernel_0/answers.py"  # as IPython names a cell
    linecache.cache[filename] = (len(submission.text), None,
                                 submission.text.splitlines(True), filename)
    exec(compile(submission.text, filename, "exec"), namespace)  # noqa: S102
    value = check("02_collectives", "allreduce_naive", namespace=namespace)
    out = capsys.readouterr().out
    assert value == 3.0, out
    lines = out.splitlines()
    assert lines[0].startswith("Checking allreduce_naive: ")
    runs = [line for line in lines if line.startswith("  [pass] ") and " rank" in line]
    assert {"at 1 rank", "at 2 ranks", "at 3 ranks", "at 4 ranks"} <= {
        " ".join(line.split(" (")[0].split()[-3:]) for line in runs}, out
    assert lines.index(runs[-1]) < lines.index("02_collectives: 3 / 3 points")


def test_the_sandbox_is_skipped_only_for_a_learner_without_one(monkeypatch):
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    monkeypatch.setattr(checkcell.sandbox, "unavailable", lambda: "no bwrap")
    assert checkcell._trusted()
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")  # grading: the sandbox is a must
    assert not checkcell._trusted()
    monkeypatch.delenv("NBGRADER_EXECUTION")
    monkeypatch.setattr(checkcell.sandbox, "unavailable", lambda: None)
    assert not checkcell._trusted()
