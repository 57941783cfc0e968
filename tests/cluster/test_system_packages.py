"""``make test``'s first step, deploy/system-packages.sh: without root, one message, no tests.

A user who cannot install (not root, no passwordless sudo) gets one message that names every
missing package and the command that installs them, and ``make test`` stops there, before the
virtual environment and before any test. Simulated as the user ``nobody`` (setpriv) when the
tests run as root, with a PATH that lacks some commands.
"""
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

from tests.support import ROOT

SCRIPT = ROOT / "deploy" / "system-packages.sh"
AS_NOBODY = ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]


def as_user(argv, path):
    """``argv`` with PATH=``path``, as nobody when we are root (else as we are)."""
    prefix = AS_NOBODY if os.geteuid() == 0 else []
    return subprocess.run([*prefix, "env", f"PATH={path}", *argv], capture_output=True,
                          text=True, timeout=60, check=False, cwd="/")


def test_nothing_found_one_message_with_the_command():
    result = as_user(["/bin/bash", str(SCRIPT)], "/nonexistent")
    assert result.returncode == 1
    lines = result.stderr.splitlines()
    assert lines[0].startswith("make test needs system packages that are missing:")
    for package in ("bubblewrap", "slurm-wlm", "munge", "sudo", "git", "gcc", "chromium",
                    "configurable-http-proxy (npm)"):
        assert package in lines[0], lines[0]
    assert "apt-get install -y bubblewrap slurm-wlm munge" in result.stderr
    assert "npm install -g configurable-http-proxy" in result.stderr
    assert result.stdout == ""


def test_only_what_is_missing_is_named():
    """Every command there but Slurm's: the message names slurm-wlm alone."""
    bindir = Path(tempfile.mkdtemp(prefix="dlhack-bin-"))  # nobody can read it (pytest's: not)
    bindir.chmod(0o755)
    for cmd in ("bwrap", "munged", "sudo", "git", "gcc", "ip", "unshare", "npm", "chromium",
                "configurable-http-proxy"):
        (bindir / cmd).symlink_to("/bin/true")
    try:
        result = as_user(["/bin/bash", str(SCRIPT), "--check"], str(bindir))
    finally:
        shutil.rmtree(bindir)
    assert result.returncode == 1
    assert "missing: slurm-wlm." in result.stderr, result.stderr
    assert "apt-get install -y slurm-wlm'" in result.stderr


@pytest.mark.skipif(shutil.which("make") is None, reason="no make")
def test_make_test_stops_before_any_test():
    result = as_user(["/usr/bin/make", "-C", str(ROOT), "test"], "/nonexistent")
    assert result.returncode != 0
    assert "make test needs system packages that are missing:" in result.stderr
    assert "pytest" not in result.stdout + result.stderr
    assert "venv" not in result.stdout


def test_everything_present_here_passes_the_check():
    """Where make test ran its installer (CI, root), the check finds nothing missing."""
    result = subprocess.run([str(SCRIPT), "--check"], capture_output=True, text=True,
                            check=False)
    if result.returncode != 0 and os.environ.get("CI") != "true":
        pytest.skip(f"system packages missing here: {result.stderr.splitlines()[0]}")
    assert result.returncode == 0, result.stderr
