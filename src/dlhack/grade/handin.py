"""A learner hands a lab in, and later fetches its feedback: nbgrader's exchange, from a flat copy.

    dlhack submit 02_collectives                     # hands in labs/02_collectives.ipynb
    dlhack submit 02_collectives my/02_collectives.ipynb --course dlhack --exchange /srv/ex
    dlhack submit --history                          # every hand-in so far, with its time
    dlhack submit --feedback 02_collectives          # -> 02_collectives/feedback/TIME/*.html

nbgrader's exchange is the course's hand-in box: ``nbgrader submit`` files a copy under the
learner's Unix name with the time (``timestamp.txt``) and a random key
(``submission_secret.txt``) in the course's ``inbound/``, which learners may write to but not
list; every hand-in is kept (the history), and the instructor's ``nbgrader collect`` takes the
latest (``dlhack grade --due`` marks it late). nbgrader expects the learner's notebook at
``LAB/LAB.ipynb`` under the folder it runs in; the course's copy is flat (``labs/LAB.ipynb``), so
this stages the saved notebook in such a folder, then runs nbgrader's own ``submit``. The
course and exchange come from nbgrader's config (``nbgrader_config.py`` on the Jupyter config
path) unless given; the hub's deployment writes none, so learners name the course
(deploy/README.md) and the exchange is nbgrader's default. Costs one nbgrader process (~2 s).

Paths are the learner's copy's when ``DLHACK_WORKSPACE`` names it (the hub's servers and
``dlhack lab`` set it, and a kernel inherits it): ``labs/LAB.ipynb`` there is what is handed in,
and feedback lands there, where JupyterLab opens it; so ``!dlhack submit LAB`` works from a
cell of the lab whatever folder the kernel is in. Without it, both are relative to the current
folder.

In JupyterLab this is run from a cell or a terminal: nbgrader's Assignments tab stays off for
learners, since it fetches and submits ``LAB/LAB.ipynb`` beside the server's root, outside the
learner's copy, where saving is refused (deploy/README.md).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

NBGRADER = [sys.executable, "-m", "nbgrader"]
ENV_WORKSPACE = "DLHACK_WORKSPACE"  # the learner's copy (dlhack.tools.workspace sets it)


def workspace():
    """The learner's copy when the server says where it is, else the current folder."""
    return Path(os.environ.get(ENV_WORKSPACE) or ".")


def pages(lab, folder):
    """The feedback pages fetched for ``lab`` under ``folder``, newest first."""
    return sorted(Path(folder, lab, "feedback").glob("*/*.html"), reverse=True)


def _options(course, exchange):
    return ([f"--course={course}"] if course else []) + (
        [f"--Exchange.root={exchange}"] if exchange else [])


def _run(args, cwd=None):
    proc = subprocess.run([*NBGRADER, *args], cwd=cwd, capture_output=True, text=True,
                          check=False)
    return proc.returncode, (proc.stdout + proc.stderr).strip()


def submit(lab, notebook, course=None, exchange=None):
    """Hand ``notebook`` in as ``lab``; ``(exit status, nbgrader's log)``."""
    with tempfile.TemporaryDirectory(prefix="dlhack-submit-") as tmp:
        (Path(tmp) / lab).mkdir()
        shutil.copyfile(notebook, Path(tmp) / lab / f"{lab}.ipynb")
        return _run(["submit", lab, f"--Exchange.assignment_dir={tmp}",
                     *_options(course, exchange)], cwd=tmp)


def history(course=None, exchange=None):
    """Every hand-in this learner made, as nbgrader lists them (its cache keeps each one)."""
    return _run(["list", "--cached", *_options(course, exchange)])


def fetch_feedback(lab, folder=".", course=None, exchange=None):
    """The released feedback on this learner's hand-ins of ``lab``, into FOLDER/LAB/feedback/."""
    return _run(["fetch_feedback", lab, f"--Exchange.assignment_dir={folder}",
                 *_options(course, exchange)])


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack submit", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("lab", nargs="?", help="the lab, e.g. 02_collectives")
    p.add_argument("notebook", nargs="?", type=Path,
                   help="the saved notebook to hand in (default: labs/LAB.ipynb)")
    p.add_argument("--course", help="nbgrader's course id (default: nbgrader's config)")
    p.add_argument("--exchange", help="nbgrader's exchange folder (default: nbgrader's config)")
    p.add_argument("--history", action="store_true", help="list every hand-in, with its time")
    p.add_argument("--feedback", action="store_true",
                   help="fetch the released feedback into LAB/feedback/ here")
    args = p.parse_args(argv)
    if args.history:
        status, log = history(args.course, args.exchange)
    elif not args.lab:
        p.error("which lab? e.g. `dlhack submit 02_collectives`")
    elif args.feedback:
        status, log = fetch_feedback(args.lab, workspace(), args.course, args.exchange)
        if status == 0:
            log += "".join(f"\nfeedback: {page}" for page in pages(args.lab, workspace()))
    else:
        notebook = args.notebook or workspace() / "labs" / f"{args.lab}.ipynb"
        if not notebook.is_file():
            print(f"dlhack submit: no notebook at {notebook}: save it, or name it", file=sys.stderr)
            return 2
        status, log = submit(args.lab, notebook, args.course, args.exchange)
        if status == 0:
            print(f"{args.lab}: handed in {notebook} ({_stamp(log)}); "
                  f"`dlhack submit --history` lists every hand-in")
    if status != 0 or args.history or args.feedback:
        print(log, file=sys.stderr if status else sys.stdout)
    return status


def _stamp(log):
    """The hand-in's time, from nbgrader's log line naming the inbound copy (``user+lab+TIME``)."""
    for line in log.splitlines():
        if "Destination:" in line and "+" in line:
            parts = line.rsplit("/", 1)[-1].split("+")
            if len(parts) >= 3:
                return f"at {parts[2]}"
    return "time in nbgrader's log"
