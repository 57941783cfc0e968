"""Render the lessons: run each one at full size and keep its outputs, stamped with the machine.

    python -m dlhack.tools.render                       # every lesson (what `make lessons` runs)
    python -m dlhack.tools.render 09                    # one lesson, by number, name or path
    python -m dlhack.tools.render --check               # exit 1 if a lesson's outputs are stale

A lesson is read more often than it is run, so it is committed with its outputs. Each lesson runs
top to bottom with nbclient in the course's ``dlhack`` kernel, from ``lessons/`` as a learner's
JupyterLab would run it, at full size (``DLHACK_SMALL`` unset) with one BLAS thread per process.
The notebook is written back in place with its outputs, and stamped:

- ``metadata["dlhack"]["rendered"]``: the machine (CPU, cores, OS, Python, numpy, Chainer, BLAS),
  the load average before and after, the date, the duration, the git commit, and a sha256 of
  each code cell's source in order, so that ``--check`` (and ``tests/course/test_rendered.py``)
  can tell when a cell changed after its outputs were made;
- a markdown cell at the top (tag ``rendered-stamp``) that says the same to a reader.

Progress bars' carriage-return redraws are collapsed to what a terminal finally shows, and
nbclient's timing metadata is not recorded, so a re-render changes only what really changed.
"""
import argparse
import datetime
import hashlib
import os
import platform
import re
import subprocess
import sys
import time
from pathlib import Path

from dlhack.jobs.mpiexec import one_thread_env

ROOT = Path(__file__).resolve().parents[3]
LESSONS = ROOT / "lessons"
KERNEL = "dlhack"
STAMP_TAG = "rendered-stamp"
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


def _cpu_model():
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return platform.processor() or platform.machine()
    found = re.search(r"^model name\s*:\s*(.+)$", text, flags=re.MULTILINE)
    return found.group(1).strip() if found else platform.machine()


def _blas():
    try:
        import numpy  # noqa: F401  (loads the BLAS that threadpoolctl then finds)
        from threadpoolctl import threadpool_info
    except ImportError:
        return None
    for pool in threadpool_info():
        if pool.get("user_api") == "blas":
            return f"{pool.get('internal_api')} {pool.get('version')} ({pool.get('architecture')})"
    return None


def _version(package):
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(package)
    except PackageNotFoundError:
        return None


def _git_commit():
    def git(*args):
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True,
                              check=False).stdout.strip()

    commit = git("rev-parse", "--short", "HEAD")
    # the lessons this render is writing do not count: only what could change their outputs
    dirty = git("status", "--porcelain", "--", ".", ":(exclude)lessons/*.ipynb")
    return commit + (" (with uncommitted changes)" if dirty else "")


def machine():
    """What ran the notebook, as a dict (no hostname)."""
    return {"cpu": _cpu_model(), "cores": os.cpu_count(),
            "os": f"{platform.system()} {platform.release()} {platform.machine()}",
            "python": platform.python_version(), "numpy": _version("numpy"),
            "chainer": _version("chainer"), "blas": _blas()}


def describe(stamp):
    """The one line a reader sees at the top of a rendered lesson."""
    m = stamp["machine"]
    load = stamp["load_before"], stamp["load_after"]
    return (f"*Outputs rendered at full size on {m['cores']} cores of {m['cpu']} "
            f"({m['os']}; Python {m['python']}, numpy {m['numpy']}, Chainer {m['chainer']}, "
            f"{m['blas']}), {stamp['date']}, in {stamp['seconds'] / 60:.1f} min "
            f"(load average {load[0]:.1f} before, {load[1]:.1f} after; commit {stamp['commit']}). "
            f"Your own run will differ in its timings. Re-render with `make lessons`.*")


def collapse(text):
    """What a terminal finally shows of ``text``: each line from its last carriage return on."""
    lines = text.replace("\r\n", "\n").split("\n")
    return "\n".join(line.rstrip("\r").rsplit("\r", 1)[-1] for line in lines)


def clean(nb):
    """Drop what makes diffs noisy: carriage-return redraws and per-cell timing metadata."""
    for cell in nb["cells"]:
        cell.get("metadata", {}).pop("execution", None)
        for out in cell.get("outputs", []):
            if out.get("output_type") == "stream":
                out["text"] = collapse(out["text"] if isinstance(out["text"], str)
                                       else "".join(out["text"]))
    return nb


def stamp_cell(nb, text):
    """Put ``text`` in the markdown cell at the top tagged ``rendered-stamp`` (one, replaced)."""
    import nbformat

    nb["cells"] = [c for c in nb["cells"]
                   if STAMP_TAG not in c.get("metadata", {}).get("tags", [])]
    cell = nbformat.v4.new_markdown_cell(text)
    cell["metadata"]["tags"] = [STAMP_TAG]
    cell["id"] = STAMP_TAG
    nb["cells"].insert(0, cell)


def render(path):
    """Run notebook ``path`` at full size, write it back with its outputs and stamp; seconds."""
    import nbformat
    from nbclient import NotebookClient

    for name in ("DLHACK_SMALL",):
        os.environ.pop(name, None)
    os.environ.update(one_thread_env(PYDEVD_DISABLE_FILE_VALIDATION="1"))
    nb = nbformat.read(path, as_version=4)
    load_before = os.getloadavg()[0]
    start = time.perf_counter()
    NotebookClient(nb, timeout=CELL_TIMEOUT, kernel_name=KERNEL, allow_errors=False,
                   record_timing=False, resources={"metadata": {"path": str(path.parent)}}).execute()
    seconds = time.perf_counter() - start
    stamp = {"machine": machine(), "date": datetime.date.today().isoformat(),
             "seconds": round(seconds, 1), "load_before": round(load_before, 2),
             "load_after": round(os.getloadavg()[0], 2), "commit": _git_commit(),
             "digests": digests(nb)}
    nb["metadata"].setdefault("dlhack", {})["rendered"] = stamp
    stamp_cell(nb, describe(stamp))
    nbformat.write(clean(nb), path)
    return seconds


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
    failed = []
    for path in paths:
        print(f"rendering {path.name} at full size ...", flush=True)
        try:
            seconds = render(path)
        except Exception as error:  # noqa: BLE001  (report it, go on with the next lesson)
            print(f"  FAILED: {type(error).__name__}: {str(error)[-3000:]}", flush=True)
            failed.append(path.name)
            continue
        print(f"  {path.name}: {seconds:.0f} s ({seconds / 60:.1f} min)", flush=True)
    if failed:
        print("failed (left as they were):", ", ".join(failed))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
