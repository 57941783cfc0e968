"""The shared course environment of the cluster tests: ``deploy/install.sh`` into ROOT/.site.

    prefix = course_env.build()     # ROOT/.site: course/, venv/, learners.git (~1 min the first
                                    # time, ~15 s when only the course changed)

It is what an admin builds in /opt/dlhack (deploy/README.md), built by the same script, so the
learners the tests create run exactly what a site's learners run. The repository's own .venv
cannot serve them: it is made by whatever ``python3`` comes first on PATH, which may live
where other users cannot read it (here: root's pyenv), and it holds ``solutions/`` beside it.
So the environment's Python is one every user can run: ``$DLHACK_SITE_PYTHON``, else this
Python when the user ``nobody`` can run it, else Debian's /usr/bin/python3.11.
"""
import functools
import os
import subprocess
import sys
from pathlib import Path

from tests.support import ROOT

PREFIX = ROOT / ".site"
INSTALL = ROOT / "deploy" / "install.sh"


def learner_python():
    """A Python 3.11 that every user can run, or None."""
    named = os.environ.get("DLHACK_SITE_PYTHON")
    candidates = [named] if named else [sys.executable, "/usr/bin/python3.11"]
    for python in candidates:
        if python and Path(python).exists() and subprocess.run(
                ["runuser", "-u", "nobody", "--", python, "-c",
                 "import sys, venv; assert sys.version_info[:2] == (3, 11)"],
                capture_output=True, check=False).returncode == 0:
            return python
    return None


@functools.cache
def build(prefix=PREFIX):
    """Run deploy/install.sh PREFIX (once per test session); returns PREFIX, or raises."""
    python = learner_python()
    if python is None:
        raise RuntimeError("no Python 3.11 that every user can run: set DLHACK_SITE_PYTHON")
    result = subprocess.run([str(INSTALL), str(prefix)], env=dict(os.environ, PYTHON=python),
                            capture_output=True, text=True, timeout=900, check=False)
    if result.returncode != 0:
        raise RuntimeError(f"deploy/install.sh failed:\n{result.stdout}\n{result.stderr}")
    return Path(prefix)
