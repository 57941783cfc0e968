"""Every lesson, solution and lab notebook runs top to bottom at the small size (DLHACK_SMALL=1).

The notebooks run two at a time (the CI machine has 2 cores), each in its own kernel with the
project's interpreter, from its own folder as JupyterLab would run it. A lab (learner copy) must
run through too: its check cells report "not yet done" instead of raising. Graded check cells
(nbgrader ``grade: true``) must write nothing to stderr, or nbgrader scores them 0.
"""
import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
NOTEBOOKS = sorted(p.relative_to(ROOT).as_posix() for folder in ("lessons", "solutions", "labs")
                   for p in (ROOT / folder).glob("*.ipynb"))
RUNNER = """
import sys, nbformat
from nbclient import NotebookClient
nb = nbformat.read(sys.argv[1], as_version=4)
NotebookClient(nb, timeout=600, kernel_name="python3", allow_errors=False,
               resources={"metadata": {"path": sys.argv[3]}}).execute()
nbformat.write(nb, sys.argv[2])
"""


def execute(relpath, outdir):
    """Run one notebook in a fresh process; returns (seconds, returncode, stderr, output path)."""
    out = outdir / relpath.replace("/", "__")
    env = {**os.environ, "DLHACK_SMALL": "1", "OMP_NUM_THREADS": "1",
           "OPENBLAS_NUM_THREADS": "1", "PYDEVD_DISABLE_FILE_VALIDATION": "1"}
    start = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(ROOT / relpath), str(out),
                           str((ROOT / relpath).parent)], check=False, env=env, capture_output=True,
                          text=True, timeout=900)
    return time.perf_counter() - start, proc.returncode, proc.stderr, out


@pytest.fixture(scope="module")
def executed(tmp_path_factory):
    outdir = tmp_path_factory.mktemp("executed")
    with ThreadPoolExecutor(max_workers=2) as pool:
        results = dict(zip(NOTEBOOKS, pool.map(lambda p: execute(p, outdir), NOTEBOOKS)))
    for path, (seconds, *_rest) in sorted(results.items(), key=lambda kv: -kv[1][0]):
        print(f"{seconds:6.1f} s  {path}")
    return results


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
