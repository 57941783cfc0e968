"""Every lesson, solution and lab notebook runs top to bottom at the small size (DLHACK_SMALL=1).

The notebooks run two at a time (the CI machine has 2 cores), each in its own kernel, the
course's ``dlhack`` kernel that JupyterLab starts for a learner (``make venv`` installs it), from
its own folder as JupyterLab would run it. A lab (learner copy) must run through too: its check
cells report "not yet done" instead of raising. Graded check cells (nbgrader ``grade: true``)
must write nothing to stderr, or nbgrader scores them 0, and leave no value under the feedback.

Two checks read the notebooks without running them: each names the ``dlhack`` kernel, and each
MPI launch in a code cell has a timeout that dumps the ranks' stacks when it fires:
``%%mpiexec --timeout S`` or ``!dlhack run --timeout S``. A bare ``!mpiexec`` hangs the cell
forever on a deadlock, and ``timeout 60 mpiexec`` kills it without saying where it hung. A cell
that shows a plain launch on purpose (lesson 6 contrasts the two) carries the cell tag
``plain-mpiexec`` and must still be killed by ``timeout``.
"""
import ast
import json
import os
import re
import shlex
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

import pytest
from IPython.core.inputtransformer2 import TransformerManager
from jupyter_client.kernelspec import KernelSpecManager

from tests.support import ROOT, course_env

NOTEBOOKS = sorted(p.relative_to(ROOT).as_posix() for folder in ("lessons", "solutions", "labs")
                   for p in (ROOT / folder).glob("*.ipynb"))
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="dlhack", allow_errors=False,
               resources={"metadata": {"path": sys.argv[3]}}).execute()
nbformat.write(nb, sys.argv[2])
"""


def execute(relpath, outdir):
    """Run one notebook in a fresh process; returns (seconds, returncode, stderr, output path)."""
    out = outdir / relpath.replace("/", "__")
    assert not out.resolve().is_relative_to(ROOT), f"{out}: write executed copies outside the repo"
    env = course_env(DLHACK_SMALL="1", PYDEVD_DISABLE_FILE_VALIDATION="1")
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(ROOT / relpath), str(out),
                           str((ROOT / relpath).parent)], check=False, env=env, capture_output=True,
                          text=True, timeout=900)
    return time.perf_counter() - start, proc.returncode, proc.stderr, out


KERNEL = "dlhack"
PLAIN_TAG = "plain-mpiexec"
LAUNCHERS = {"mpiexec", "mpirun", "srun"}
SHELL_MAGICS = {"bash", "sh", "script", "system"}
# Python calls that start a process (``sh`` is lesson 8's helper around subprocess.run).
PROCESS_CALLS = {"run", "Popen", "call", "check_call", "check_output", "system", "sh"}


def notebook(relpath):
    return json.loads((ROOT / relpath).read_text(encoding="utf-8"))


def longest_first(relpath):
    """Lessons, then solutions, then labs (the learner copies run fastest), each by name: the
    two workers then end together instead of one running a long lesson alone at the end."""
    return ["lessons", "solutions", "labs"].index(relpath.split("/")[0]), relpath


@pytest.fixture(scope="module")
def executed(request, tmp_path_factory):
    """Run the notebooks whose run test was selected (all of them in `make test`), 2 at a time."""
    specs = KernelSpecManager().find_kernel_specs()
    assert KERNEL in specs, (f"no {KERNEL!r} kernelspec (found {sorted(specs)}): `make venv` "
                             f"installs it with ipykernel install --sys-prefix --name {KERNEL}")
    wanted = sorted({item.callspec.params["relpath"] for item in request.session.items
                     if getattr(item, "originalname", "") == "test_notebook_runs_top_to_bottom"},
                    key=longest_first)
    outdir = tmp_path_factory.mktemp("executed")
    # The committed notebooks carry full-size outputs (`make lessons`): a small run must never
    # write over them, only into outdir.
    before = {p: (ROOT / p).read_bytes() for p in wanted}
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(wanted, pool.map(lambda p: execute(p, outdir), wanted)))
    changed = [p for p in wanted if (ROOT / p).read_bytes() != before[p]]
    assert not changed, f"running at small size wrote over the committed notebooks {changed}"
    for path, (seconds, *_rest) in sorted(results.items(), key=lambda kv: -kv[1][0]):
        print(f"{seconds:6.1f} s  {path}")
    return results


def shell_problem(command, plain):
    """What is wrong with one shell command line of a notebook, or None."""
    try:
        words = shlex.split(command, comments=True)
    except ValueError:
        words = command.split()
    names = [os.path.basename(w) for w in words]
    if "dlhack" in names and "run" in names[names.index("dlhack") + 1:][:1]:
        if not {"--timeout", "-t"} & set(words) and not any(
                w.startswith("--timeout=") for w in words):
            return f"`{command.strip()}`: dlhack run without --timeout"
        return None
    if LAUNCHERS & set(names):
        if plain and "timeout" in names:
            return None
        return (f"`{command.strip()}`: a plain launch; use `dlhack run -n N --timeout S -- ...` "
                f"or `%%mpiexec -n N --timeout S`, which say where each rank hung")
    return None


def _literal(node):
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else None


def launch_problems(source, plain=False):
    """The MPI launches of one code cell that lack a timeout with a stack report."""
    code = TransformerManager().transform_cell(source)
    problems = []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return [f"cannot parse the cell:\n{source[:200]}"]
    skip = set()  # bodies of %%writefile and friends: files written, not launches
    for node in ast.walk(tree):
        if id(node) in skip or not isinstance(node, ast.Call):
            continue
        func = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(
            node.func, "id", "")
        args = [_literal(a) for a in node.args]
        if func == "run_cell_magic" and len(args) == 3 and args[0]:
            skip.update(id(n) for n in ast.walk(node))
            name, line, body = args
            if name == "mpiexec" and not re.search(r"(^|\s)(--timeout|-t)(\s|=|$)", line or ""):
                problems.append(f"`%%mpiexec {line}`: no --timeout")
            elif name in SHELL_MAGICS:
                problems += filter(None, (shell_problem(x, plain) for x in (body or "").splitlines()))
        elif func in ("system", "getoutput") and args and args[0]:
            problems += filter(None, [shell_problem(args[0], plain)])
        elif func in PROCESS_CALLS:  # subprocess.run(["mpiexec", ...]), sh("mpiexec", ...)
            words = [n for n in ast.walk(node) if n is not node]
            launcher = any(os.path.basename(_literal(n) or "") in LAUNCHERS for n in words) or any(
                isinstance(n, ast.Name) and n.id.upper() in {x.upper() for x in LAUNCHERS}
                for n in words)
            if launcher and not (plain and any(_literal(n) == "timeout" for n in words)):
                problems.append(f"`{ast.unparse(node)[:120]}`: a plain launch from Python; use "
                                f"dlhack.tools.launch.run(..., timeout=S)")
                skip.update(id(n) for n in words)
    return problems


def test_launch_check_knows_good_from_bad():
    assert launch_problems("%%mpiexec -n 2 --timeout 30\nprint(1)") == []
    assert launch_problems("!dlhack run -n 3 --timeout 120 -- python try.py x") == []
    assert launch_problems("%%writefile s.py\n# mpiexec -n 4 python s.py\nimport os") == []
    assert launch_problems("x = 1\nprint('run it with mpiexec -n 2')") == []
    assert launch_problems("MPIEXEC = str(Path(sys.executable).with_name('mpiexec'))") == []
    assert launch_problems("result = run([sys.executable, 'x.py'], n=2, timeout=60)") == []
    bad = ["%%mpiexec -n 4\nprint(1)", "!mpiexec -n 3 python hello.py",
           "!timeout 60 mpiexec -n 2 python x.py", "!dlhack run -n 2 -- python x.py",
           "out = !mpirun -n 2 hostname", "%%bash\nmpiexec -n 2 python x.py",
           "subprocess.run(['mpiexec', '-n', '2', 'python', 'x.py'])",
           "subprocess.run([MPIEXEC, '-n', '2', sys.executable, 'x.py'], timeout=60)"]
    for cell in bad:
        assert len(launch_problems(cell)) == 1, cell
    # a cell tagged to show a plain launch on purpose must still be killed by `timeout`
    assert launch_problems("!timeout 6 mpiexec -n 2 python x.py", plain=True) == []
    assert launch_problems("subprocess.run(['timeout', '6', MPIEXEC, '-n', '2'])", plain=True) == []
    assert len(launch_problems("!mpiexec -n 2 python x.py", plain=True)) == 1


@pytest.mark.parametrize("relpath", NOTEBOOKS)
def test_notebook_uses_the_course_kernel(relpath):
    spec = notebook(relpath)["metadata"].get("kernelspec", {})
    assert spec.get("name") == KERNEL, (
        f"{relpath} asks for kernel {spec.get('name')!r}: set its metadata.kernelspec to "
        f'{{"name": "{KERNEL}", "display_name": "Python (dlhack)", "language": "python"}}')


@pytest.mark.parametrize("relpath", NOTEBOOKS)
def test_every_mpi_launch_has_a_timeout_with_a_stack_report(relpath):
    problems = []
    for i, cell in enumerate(notebook(relpath)["cells"]):
        if cell["cell_type"] != "code":
            continue
        plain = PLAIN_TAG in cell.get("metadata", {}).get("tags", [])
        source = "".join(cell["source"]) if isinstance(cell["source"], list) else cell["source"]
        problems += [f"cell {i}: {p}" for p in launch_problems(source, plain)]
    assert not problems, f"{relpath}:\n" + "\n".join(problems)


def test_there_are_notebooks():
    assert any(p.startswith("lessons/") for p in NOTEBOOKS)


@pytest.mark.parametrize("relpath", NOTEBOOKS)
def test_notebook_runs_top_to_bottom(relpath, executed):
    seconds, returncode, stderr, out = executed[relpath]
    assert returncode == 0, f"{relpath} failed after {seconds:.0f} s:\n{stderr[-4000:]}"
    nb = json.loads(out.read_text(encoding="utf-8"))
    for cell in nb["cells"]:
        if cell.get("metadata", {}).get("nbgrader", {}).get("grade"):
            noisy = [o for o in cell.get("outputs", [])
                     if o.get("output_type") == "stream" and o.get("name") == "stderr"]
            assert not noisy, f"{relpath}: a graded check cell wrote to stderr: {noisy[0]}"
            if "dlhack.grade.check(" in "".join(cell["source"]):
                values = [o for o in cell.get("outputs", [])
                          if o.get("output_type") == "execute_result"]
                assert not values, f"{relpath}: a check cell shows a value: {values[0]}"
