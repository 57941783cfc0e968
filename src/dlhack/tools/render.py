"""Render the lessons: run each one at full size from a clean checkout and keep its outputs.

    python -m dlhack.tools.render                       # every lesson (what `make lessons` runs)
    python -m dlhack.tools.render 09                    # one lesson, by number, name or path
    python -m dlhack.tools.render --check               # exit 1 if a lesson's outputs are stale

A lesson is read more often than it is run, so it is committed with its outputs, and a render
must be traceable to the code that made them. So the lessons run from a clean checkout of the
last commit (``git archive HEAD`` into a temporary folder, with that checkout's ``src/`` first on
``PYTHONPATH``), never from the working tree: uncommitted changes cannot leak into a render, and
the checkout has no ``../shared`` beside it, so a lesson finds only what a learner's copy finds.
A lesson with uncommitted changes of its own is refused (its outputs would be written over
them). Each runs top to bottom with nbclient in the course's ``dlhack`` kernel, at full size
(``DLHACK_SMALL`` unset), one BLAS thread per process, and is written back into ``lessons/``:

- ``metadata["dlhack"]["rendered"]``: the machine (CPU, cores, OS, Python, numpy, Chainer, BLAS),
  the load average before and after, the date, the duration, the commit that was rendered, the
  seconds each section took (``sections``, what the mentors' guides quote), and a sha256 of each
  code cell's source in order, so that ``--check`` can tell when a cell changed after rendering;
- a markdown cell at the top (tag ``rendered-stamp``) that says the same to a reader.

Outputs are cleaned as ``dlhack.tools.outputs`` describes (progress bars as JupyterLab shows
them, no escape codes, no timing metadata), so a re-render changes only what really changed.
Cost: the lessons' own run time, plus a copy of the repository's tracked files.
"""
import argparse
import datetime
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

from dlhack.jobs.mpiexec import one_thread_env
from dlhack.tools import outputs
from dlhack.tools.outputs import clean, collapse  # noqa: F401  (the names tests and docs use)
from dlhack.tools.renderstamp import describe, machine, sections

ROOT = Path(__file__).resolve().parents[3]
LESSONS = ROOT / "lessons"
KERNEL = "dlhack"
STAMP_TAG = "rendered-stamp"
FORMAT = 2  # 2: rendered from a clean checkout, commit named, section times recorded
CELL_TIMEOUT = 3600  # seconds for one cell; a whole lesson has no limit of its own


def source(cell):
    """A cell's source as one string (nbformat keeps it as a string or a list of lines)."""
    text = cell.get("source", "")
    return "".join(text) if isinstance(text, list) else text


def digests(nb):
    """The sha256 of every code cell's source, in order."""
    return [hashlib.sha256(source(c).encode("utf-8")).hexdigest()
            for c in nb["cells"] if c["cell_type"] == "code"]


def problems(nb, name):
    """Why the outputs of notebook ``nb`` (called ``name``) are stale; [] when they are current."""
    again = f"run `make lessons` (or `python -m dlhack.tools.render {name}`)"
    stamp = nb.get("metadata", {}).get("dlhack", {}).get("rendered")
    if not stamp:
        return [f"{name}: never rendered (no metadata.dlhack.rendered): {again}"]
    code = [(i, c) for i, c in enumerate(nb["cells"]) if c["cell_type"] == "code"]
    if not any(c.get("outputs") for _, c in code):
        return [f"{name}: no code cell has outputs: {again}"]
    found, kept = digests(nb), stamp.get("digests", [])
    out = []
    for k, (i, cell) in enumerate(code):
        if k >= len(kept) or kept[k] != found[k]:
            first = next((line for line in source(cell).splitlines() if line.strip()), "")
            out.append(f"{name}: cell {i} changed after its outputs were rendered "
                       f"(first line: {first[:70]!r}): {again}")
    if len(kept) > len(found):
        out.append(f"{name}: {len(kept) - len(found)} code cell(s) removed since rendering: {again}")
    return out


def git(*args):
    """The stripped standard output of ``git ARGS`` in the repository."""
    done = subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def uncommitted(path):
    """Whether ``path`` differs from its committed version (or is not committed at all)."""
    rel = path.relative_to(ROOT).as_posix()
    known = subprocess.run(["git", "cat-file", "-e", f"HEAD:{rel}"], cwd=ROOT,
                           capture_output=True, check=False).returncode == 0
    changed = subprocess.run(["git", "diff", "--quiet", "HEAD", "--", rel], cwd=ROOT,
                             check=False).returncode != 0
    return not known or changed


@contextmanager
def clean_checkout():
    """``(commit, folder)``: the tracked files of HEAD, unpacked in a temporary folder."""
    commit = git("rev-parse", "HEAD")
    parent = Path(tempfile.mkdtemp(prefix="dlhack-render-"))
    folder = parent / "dlhack"
    folder.mkdir()
    try:
        archive = subprocess.run(["git", "archive", "--format=tar", commit], cwd=ROOT,
                                 capture_output=True, check=True).stdout
        subprocess.run(["tar", "-x", "-C", str(folder)], input=archive, check=True)
        yield commit, folder
    finally:
        shutil.rmtree(parent, ignore_errors=True)


def kernel_environment(checkout):
    """The environment every process of a render inherits: the checkout's code, full size."""
    os.environ.pop("DLHACK_SMALL", None)
    os.environ.update(one_thread_env(PYDEVD_DISABLE_FILE_VALIDATION="1"))
    # before the editable install's path: the kernel, `!dlhack` and every rank import this copy
    os.environ["PYTHONPATH"] = os.pathsep.join(
        [str(checkout / "src"), *filter(None, [os.environ.get("PYTHONPATH")])])
    found = subprocess.run([sys.executable, "-c", "import dlhack; print(dlhack.__file__)"],
                           capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).resolve().is_relative_to(checkout.resolve()):
        raise RuntimeError(f"the render would import dlhack from {found}, not the checkout")


def run(nb, folder):
    """Execute ``nb`` in ``folder``; the seconds each code cell took, by cell index."""
    from nbclient import NotebookClient

    started, seconds = {}, {}

    def on_start(cell, cell_index, **_):
        started[cell_index] = time.perf_counter()

    def on_executed(cell, cell_index, **_):
        seconds[cell_index] = time.perf_counter() - started.pop(cell_index, time.perf_counter())

    NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name=KERNEL, allow_errors=False,
                   record_timing=False, on_cell_start=on_start, on_cell_executed=on_executed,
                   resources={"metadata": {"path": str(folder)}}).execute()
    return seconds


def render(path, checkout, commit):
    """Run the committed lesson ``path`` in ``checkout``; write it back with outputs and stamp."""
    import nbformat

    copy = checkout / path.relative_to(ROOT)
    nb = nbformat.read(copy, as_version=4)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    cell_seconds = run(nb, copy.parent)
    seconds = time.perf_counter() - start
    clean(nb)
    leaks = [p for p in outputs.problems(nb, path.stem) if "outside the repository" in p]
    if leaks:
        raise RuntimeError("; ".join(leaks))
    stamp = {"format": FORMAT, "machine": machine(), "date": datetime.date.today().isoformat(),
             "seconds": round(seconds, 1), "load_before": round(load_before, 2),
             "load_after": round(os.getloadavg()[0], 2), "commit": commit,
             "sections": sections(nb, cell_seconds), "digests": digests(nb)}
    nb["metadata"].setdefault("dlhack", {})["rendered"] = stamp
    stamp_cell(nb, describe(stamp))
    nbformat.write(nb, path)
    return seconds


def stamp_cell(nb, text):
    """Put ``text`` in the markdown cell at the top tagged ``rendered-stamp`` (one, replaced)."""
    import nbformat

    nb["cells"] = [c for c in nb["cells"]
                   if STAMP_TAG not in c.get("metadata", {}).get("tags", [])]
    cell = nbformat.v4.new_markdown_cell(text)
    cell["metadata"]["tags"] = [STAMP_TAG]
    cell["id"] = STAMP_TAG
    nb["cells"].insert(0, cell)


def find(names):
    """The lesson notebooks named by number (``09``), stem, file name or path, each once; all by
    default."""
    every = sorted(LESSONS.glob("*.ipynb"))
    if not names:
        return every
    found = []
    for name in names:
        path = Path(name)
        if path.suffix == ".ipynb" and path.exists():
            found.append(path.resolve())
            continue
        match = [p for p in every if p.stem == name or p.name == name or p.stem.startswith(name)]
        if len(match) != 1:
            raise SystemExit(f"render: {name!r} names {len(match)} lessons; "
                             f"give one of {[p.stem for p in every]}")
        found += match
    return list(dict.fromkeys(found))  # a lesson named twice is rendered once


def render_all(paths):
    """Render ``paths`` from one clean checkout of HEAD; the names of those that failed."""
    refused = [p for p in paths if not p.is_relative_to(LESSONS) or uncommitted(p)]
    for path in refused:
        print(f"refused {path.name}: a render runs the committed lesson and writes over it; "
              "commit it first", flush=True)
    failed = [p.name for p in refused]
    with clean_checkout() as (commit, checkout):
        dirty = git("status", "--porcelain", "--untracked-files=no")
        print(f"rendering commit {commit[:12]} from a clean checkout"
              + (" (uncommitted changes in this tree are not in the render)" if dirty else ""))
        kernel_environment(checkout)
        for path in [p for p in paths if p not in refused]:
            print(f"rendering {path.name} at full size ...", flush=True)
            try:
                seconds = render(path, checkout, commit)
            except Exception as error:  # noqa: BLE001  (report it, go on with the next lesson)
                print(f"  FAILED: {type(error).__name__}: {str(error)[-3000:]}", flush=True)
                failed.append(path.name)
                continue
            print(f"  {path.name}: {seconds:.0f} s ({seconds / 60:.1f} min)", flush=True)
    return failed


def main(argv=None):
    """The command line: render the named lessons (all by default), or --check them."""
    parser = argparse.ArgumentParser(prog="python -m dlhack.tools.render", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("lessons", nargs="*", metavar="LESSON",
                        help="a lesson: 09, 09_overlap, or a path (default: every lesson)")
    parser.add_argument("-c", "--check", action="store_true",
                        help="render nothing; exit 1 if a lesson's outputs are missing or stale")
    args = parser.parse_args(argv)
    import nbformat

    paths = find(args.lessons)
    if args.check:
        found = [p for path in paths for p in problems(nbformat.read(path, as_version=4),
                                                        path.stem)]
        print("\n".join(found) or f"{len(paths)} lesson(s) rendered and current")
        return 1 if found else 0
    failed = render_all(paths)
    if failed:
        print("failed or refused (left as they were):", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
