"""The learner's answers as one Python module, taken from a notebook file or from a live kernel.

A lab notebook marks each answer cell as an nbgrader ``solution`` cell. The grader takes the code
of those cells only (never the check cells, the demos or the ``%%writefile`` cells), in notebook
order, and writes it as ``submission.py``, which the graded tests import through the adapter in
``graded/conftest.py``. So answer cells must be self-contained: their imports inside them, no
variables from other cells. Magic lines (``%time``, ``!ls``) are replaced by ``pass``; a cell that
starts with a cell magic (``%%writefile``) is left out.

Inside a running notebook (``dlhack.grade.check``) the file on disk may be unsaved, and a kernel
does not reliably know its own notebook's path. So the answers come from the live namespace
instead: for each answer function, the whole cell that defined it. IPython (and so ipykernel,
under Jupyter and under nbclient) registers each cell's code with ``linecache`` under the
``co_filename`` of the functions the cell defines, with magics already turned into
``get_ipython()`` calls; those lines are replaced like magics.

A lab may ask for a whole script instead of a function: an answer cell that starts with
``%%writefile NAME.py`` (leading comment lines aside). Its exercise is ``NAME``. Such a cell is
not run as Python; the file it writes goes into submission.py as a dict constant,
``WRITTEN_FILES = {"NAME.py": text}``, one line of the script per line of submission.py (so a
line of the script maps back to its cell). The lab's tests read it through the adapter and run
the script themselves. In a live kernel the cell comes from the input history (``_ih``, or the
raw history of ``get_ipython()``): the last cell run that writes ``NAME.py``.
"""
import ast
import inspect
import json
import linecache
import re
from dataclasses import dataclass, field
from pathlib import Path

MAGIC_PREFIXES = ("%", "!", "get_ipython().")
FILES = "WRITTEN_FILES"  # the dict constant of submission.py that holds %%writefile answers
WRITEFILE = re.compile(r"%%writefile(?:\s+-a)?\s+(?P<name>[\w.-]+\.py)\s*")


class SubmissionError(Exception):
    """A notebook the grader cannot read as a submission: not JSON, no answer cells, no lab."""


@dataclass
class Cell:
    """One answer cell: where it came from (for messages) and its code."""

    label: str
    source: str


@dataclass
class Submission:
    """The module built from the answer cells, and which lines came from which cell."""

    text: str
    spans: list = field(default_factory=list)   # [(first line, last line, label)], 1-based
    errors: list = field(default_factory=list)  # cells left out for syntax errors, as messages

    def where(self, lineno):
        """``{"cell", "line", "code"}`` for a line of submission.py, or None for the header."""
        for first, last, label in self.spans:
            if first <= lineno <= last:
                code = self.text.splitlines()[lineno - 1].strip()
                return {"cell": label, "line": lineno - first + 1, "code": code}
        return None


def clean_cell(source):
    """The Python in a cell: magic lines become ``pass``; a cell magic's cell becomes empty."""
    if source.lstrip().startswith("%%"):
        return ""
    lines = []
    for line in source.splitlines():
        code = line.lstrip()
        if code.startswith(MAGIC_PREFIXES):
            line = line[: len(line) - len(code)] + "pass  # notebook magic, skipped by the grader"
        lines.append(line)
    return "\n".join(lines)


def writefile(source):
    """``(file name, text)`` when a cell is ``%%writefile NAME.py`` (after any comment lines,
    such as a planted mutant's header), else None."""
    lines = source.splitlines(keepends=True)
    for i, line in enumerate(lines):
        code = line.strip()
        if not code or code.startswith("#"):
            continue
        match = WRITEFILE.fullmatch(code)
        return (match["name"], "".join(lines[i + 1:])) if match else None
    return None


def _syntax_error(label, err):
    line = getattr(err, "lineno", None)
    text = (getattr(err, "text", None) or "").strip()
    return (f"{label}" + (f" at line {line}" if line else "") + f": {getattr(err, 'msg', err)}"
            + (f": {text}" if text else ""))


def build(cells, origin):
    """Join answer cells into one module, remembering which lines came from which cell.

    A cell with a syntax error is left out (and noted in ``errors``), so that one unfinished
    cell costs its own exercise only, not every exercise of the lab. A ``%%writefile`` cell
    becomes an entry of ``WRITTEN_FILES`` (a later cell writing the same file replaces it); a
    script with a syntax error is kept, since running it is what the lab's tests grade, and noted.
    """
    lines = [f"# The answer cells of {origin}, joined by dlhack.grade.", ""]
    spans, errors, written = [], [], []
    for cell in cells:
        script = writefile(cell.source)
        if script:
            name, text = script
            try:
                compile(text, name, "exec")
            except (SyntaxError, ValueError) as err:
                errors.append(_syntax_error(f"{name} ({cell.label}) has a syntax error", err))
            if not written:
                lines.append(f"{FILES} = {{}}")
            written.append(name)
            body = [f"{FILES}[{name!r}] = \"\".join(["]
            body += [f"    {line!r}," for line in text.splitlines(keepends=True)] + ["])"]
        else:
            code = clean_cell(cell.source)
            try:
                compile(code, cell.label, "exec")
            except (SyntaxError, ValueError) as err:  # ValueError: null bytes, on Python 3.11
                errors.append(_syntax_error(f"{cell.label} was left out: syntax error", err))
                code = "# (left out: syntax error)"
            body = code.splitlines()
        lines.append(f"# ---- {cell.label} ----")
        spans.append((len(lines) + 1, len(lines) + len(body), cell.label))
        lines += body + ["", ""]
    return Submission(text="\n".join(lines) + "\n", spans=spans, errors=errors)


def read_notebook(path):
    """The notebook at ``path`` as a dict, or a SubmissionError saying what is wrong with it."""
    try:
        nb = json.loads(Path(path).read_bytes().decode("utf-8"))
    except OSError as err:
        raise SubmissionError(f"cannot read {path}: {err.strerror}") from None
    except UnicodeDecodeError:
        raise SubmissionError(f"{path} is not a notebook (not UTF-8 text)") from None
    except json.JSONDecodeError as err:
        raise SubmissionError(f"{path} is not a notebook: invalid JSON at line {err.lineno}, "
                              f"column {err.colno} ({err.msg}); was it saved completely?") from None
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list):
        raise SubmissionError(f"{path} is JSON but not a Jupyter notebook (no list of cells)")
    return nb


def _text(source):
    return "".join(source) if isinstance(source, list) else str(source or "")


def answer_cells(nb):
    """The notebook's answer cells: code cells that nbgrader metadata marks ``solution``."""
    cells = []
    for index, cell in enumerate(nb["cells"]):
        if not isinstance(cell, dict):
            continue
        meta = (cell.get("metadata") or {}).get("nbgrader") or {}
        if cell.get("cell_type") == "code" and meta.get("solution"):
            grade_id = meta.get("grade_id")
            label = f"answer cell '{grade_id}'" if grade_id else f"cell {index + 1}"
            cells.append(Cell(label=label, source=_text(cell.get("source"))))
    return cells


def lab_of(path, nb, labs):
    """Which of ``labs`` a notebook is for: its ``dlhack.lab`` metadata, else its file name
    (``02_collectives-tanaka.ipynb``), else its folder's (``02_collectives/tanaka.ipynb``)."""
    lab = ((nb.get("metadata") or {}).get("dlhack") or {}).get("lab") if nb else None
    if lab in labs:
        return lab
    matches = [name for name in labs if Path(path).name.startswith(name)]
    if matches:
        return max(matches, key=len)
    return Path(path).parent.name if Path(path).parent.name in labs else None


def from_notebook(path):
    """``(Submission, notebook dict)`` from a notebook file; SubmissionError if there is none."""
    nb = read_notebook(path)
    cells = answer_cells(nb)
    if not cells:
        raise SubmissionError(f"{path} has no answer cells (code cells marked as nbgrader solution "
                              f"cells): was it made from a notebook in labs/?")
    return build(cells, Path(path).name), nb


def defining_cell(obj):
    """``(key, source)`` of the cell (or file) that defined a function, via linecache."""
    code = getattr(obj, "__code__", None)
    if code is not None:
        lines = linecache.getlines(code.co_filename)
        if lines:
            return code.co_filename, "".join(lines)
    return id(obj), inspect.getsource(obj)  # classes, or code that linecache does not know


def history_cells(namespace):
    """The cells run so far in a live kernel, as typed (newest last); [] outside IPython."""
    shell = namespace.get("get_ipython")
    try:
        raw = list(shell().history_manager.input_hist_raw)
    except Exception:  # noqa: BLE001 - not IPython, or no history: fall back to _ih
        raw = None
    return raw if raw else [str(c) for c in namespace.get("_ih", namespace.get("In", [])) or []]


def _magic_call(cell):
    """``get_ipython().run_cell_magic('writefile', 'x.py', text)`` (IPython's parsed form)
    back into the cell as typed; None for anything else."""
    try:
        tree = ast.parse(cell)
    except SyntaxError:
        return None
    for node in tree.body:
        call = node.value if isinstance(node, ast.Expr) else None
        if (isinstance(call, ast.Call) and getattr(call.func, "attr", "") == "run_cell_magic"
                and len(call.args) == 3
                and all(isinstance(a, ast.Constant) and isinstance(a.value, str) for a in call.args)):
            magic, line, text = (a.value for a in call.args)
            return f"%%{magic} {line}\n{text}"
    return None


def written_cell(name, namespace):
    """The source of the last cell run in this kernel that is ``%%writefile NAME.py``, or None."""
    for cell in reversed(history_cells(namespace)):
        for source in (cell, _magic_call(cell)):
            script = writefile(source) if source else None
            if script and script[0] == f"{name}.py":
                return source
    return None


def from_namespace(names, namespace, origin="this notebook"):
    """``(Submission, missing names)`` from the cells that defined ``names`` in ``namespace``.

    A name that no function in ``namespace`` has is looked for as a script: the last cell run
    that is ``%%writefile NAME.py``.
    """
    cells, seen, missing = [], set(), []
    for name in names:
        obj = namespace.get(name)
        if obj is None or not callable(obj):
            source = written_cell(name, namespace)
            if source is None:
                missing.append(name)
            else:
                cells.append(Cell(label=f"the %%writefile {name}.py cell", source=source))
            continue
        try:
            key, source = defining_cell(obj)
        except (OSError, TypeError):
            missing.append(name)
            continue
        if key not in seen:
            seen.add(key)
            cells.append(Cell(label=f"the cell defining {name}", source=source))
    return build(cells, origin), missing
