"""``dlhack lab``: the learner's own copy of the lessons and labs, and JupyterLab on it.

    dlhack lab                      # what `make lab` runs: copy what is missing, start JupyterLab
    dlhack lab --copy-only          # only make (or complete) the copy, and say where it is
    dlhack lab -- --port 8890       # arguments after `--` go to `jupyter lab`

The repository's ``lessons/`` and ``labs/`` stay as they were committed: a learner works in
``mywork/lessons/`` and ``mywork/labs/`` (ignored by git). A file is copied only when the copy
lacks it, so a learner's work is never overwritten and a new lab shows up after a ``git pull``.
The two folders keep their layout side by side, so the links between them (``../labs/``) and the
files that lessons read (``lessons/scripts/``) work in the copy as in the repository.

JupyterLab starts at the repository root, with the file browser open on the copy, and the
settings of ``etc/jupyter/`` (read its README): one kernel, the course's ``dlhack``; nbgrader's
instructor tools hidden; and a save guard, :func:`refuse_outside_workspace`, that refuses to
save a file outside the copy, so the repository stays clean whatever the learner opens.
"""
import argparse
import os
import shutil
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]  # src/dlhack/tools/workspace.py -> the repository
FOLDERS = ("lessons", "labs")
WORKSPACE = "mywork"
SKIP_DIRS = {"result", "__pycache__", ".ipynb_checkpoints"}  # outputs, never course material
ENV_WORKSPACE = "DLHACK_WORKSPACE"  # tells the save guard, in the server, where saving is fine
ENV_EDIT_COURSE = "DLHACK_EDIT_COURSE"  # instructors: allow saving anywhere


def course_files(source):
    """The files of ``source``'s lessons and labs that belong to the course, as relative paths.

    Left out: what notebooks write at run time (``result/``, checkpoints, caches, and the
    scripts a notebook writes next to itself, ``lessons/*.py`` and ``labs/*.py``).
    """
    files = []
    for folder in FOLDERS:
        top = Path(source, folder)
        for path in sorted(top.rglob("*")):
            rel = path.relative_to(source)
            if not path.is_file() or SKIP_DIRS & set(rel.parts) or path.name.startswith("."):
                continue
            if path.parent == top and path.suffix in (".py", ".pyc"):
                continue
            files.append(rel)
    return files


def make_workspace(workspace, source=ROOT):
    """Copy into ``workspace`` each course file it lacks; never overwrite one.

    Args:
        workspace: the learner's folder; gets ``lessons/`` and ``labs/``.
        source: the repository to copy from.

    Returns:
        ``(copied, kept)``: relative paths copied now, and those already there (left alone).
    """
    copied, kept = [], []
    for rel in course_files(source):
        target = Path(workspace, rel)
        if target.exists():
            kept.append(rel)
            continue
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(Path(source, rel), target)
        copied.append(rel)
    return copied, kept


def refuse_outside_workspace(model, path, contents_manager, **kwargs):
    """JupyterLab's pre-save hook: refuse to save outside the learner's copy, saying why.

    Saving is allowed anywhere when ``DLHACK_EDIT_COURSE=1`` (instructors editing the course), or
    when the server was not started by ``dlhack lab`` (no ``DLHACK_WORKSPACE``).
    """
    from tornado.web import HTTPError  # imported here: only the Jupyter server needs it

    workspace = os.environ.get(ENV_WORKSPACE)
    if not workspace or os.environ.get(ENV_EDIT_COURSE) == "1":
        return
    target = Path(contents_manager.root_dir, path.lstrip("/")).resolve()
    home = Path(workspace).resolve()
    if target == home or home in target.parents:
        return
    try:
        shown = Path(os.path.relpath(home, contents_manager.root_dir)).as_posix()
    except ValueError:  # another drive
        shown = str(home)
    raise HTTPError(403, f"{path} is not saved: this JupyterLab keeps the repository clean and "
                         f"saves only inside your copy, {shown}/ (open {shown}/{path} "
                         f"instead). Instructors: start it with {ENV_EDIT_COURSE}=1.")


def lab_command(root, workspace, extra=()):
    """The ``jupyter lab`` command line and environment of the course's JupyterLab."""
    bindir = Path(sys.executable).parent
    try:
        start = Path(workspace).resolve().relative_to(Path(root).resolve()).as_posix()
    except ValueError:
        raise SystemExit(f"dlhack lab: the copy {workspace} must be inside the root {root}")
    env = dict(os.environ)
    env[ENV_WORKSPACE] = str(Path(workspace).resolve())
    # The course's settings first; they name only what differs from a plain `jupyter lab`.
    env["JUPYTER_CONFIG_PATH"] = os.pathsep.join(
        p for p in (str(ROOT / "etc" / "jupyter"), env.get("JUPYTER_CONFIG_PATH")) if p)
    # Kernels inherit this: the environment's python, mpiexec and dlhack come first for `!`
    # lines, activated or not, and one BLAS thread per rank.
    env["PATH"] = f"{bindir}{os.pathsep}{env.get('PATH', '')}"
    env.setdefault("OMP_NUM_THREADS", "1")
    env.setdefault("OPENBLAS_NUM_THREADS", "1")
    cmd = [str(bindir / "jupyter"), "lab", f"--ServerApp.root_dir={Path(root).resolve()}",
           f"--LabApp.default_url=/lab/tree/{start}", *extra]
    if hasattr(os, "geteuid") and os.geteuid() == 0:  # a container's root: Jupyter refuses it
        cmd.insert(2, "--allow-root")
    return cmd, env


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack lab", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-w", "--workspace", type=Path, default=None,
                   help=f"the learner's copy (default: ROOT/{WORKSPACE})")
    p.add_argument("-r", "--root", type=Path, default=ROOT,
                   help="where JupyterLab's file browser starts (default: the repository)")
    p.add_argument("--copy-only", action="store_true",
                   help="make or complete the copy, then stop (no JupyterLab)")
    p.add_argument("jupyter_args", nargs="*", help="arguments for `jupyter lab`, after --")
    args = p.parse_args(argv)
    workspace = args.workspace or args.root / WORKSPACE
    copied, kept = make_workspace(workspace)
    print(f"Your copy of the lessons and labs: {Path(workspace).resolve()}/ (lessons/, labs/)\n"
          f"  {len(copied)} file(s) copied now; {len(kept)} already there, left as they are.\n"
          f"  JupyterLab saves only inside it: the repository's own lessons/ and labs/ stay "
          f"clean.", flush=True)
    if args.copy_only:
        return 0
    cmd, env = lab_command(args.root, workspace, args.jupyter_args)
    if not Path(cmd[0]).exists():
        raise SystemExit(f"dlhack lab: no JupyterLab in this environment ({cmd[0]}): `make venv` "
                         f"installs it (pyproject's dev extra)")
    os.execvpe(cmd[0], cmd, env)  # Ctrl-C then reaches JupyterLab itself


if __name__ == "__main__":
    raise SystemExit(main())
