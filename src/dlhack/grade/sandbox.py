"""The sandbox of one graded run: bubblewrap (``bwrap``) namespaces around mpiexec and its ranks.

    reason = sandbox.unavailable()            # None when bwrap works on this machine
    prefix = sandbox.command(paths)           # supervise.start(..., prefix=prefix)

Debian's bubblewrap builds it (``apt-get install bubblewrap``; found on PATH); nothing is done
by hand. Inside, mpiexec, every rank and whatever they start run

- in their own PID namespace: when mpiexec ends (or the grader kills bwrap), the namespace's
  init dies and the kernel kills every process in it, double-forked daemons included;
- as uid/gid 65534 (nobody) in a user namespace of their own, with no capabilities;
- without network (only a loopback of their own), in their own IPC and UTS namespaces;
- in a mount namespace that shows read-only the system (``/usr``, ``/etc`` without its
  password files, ...), the Python environment and the project, but not ``solutions/``,
  ``graded/`` (the labs' tests), ``tests/``, ``.git``, ``mywork/``, nor the folder the
  submission came from;
  ``/tmp``, ``/dev/shm`` and the working folder are private tmpfs of bounded size; the run's
  own folder of run files and results is the only place on disk it can write.

The project's lab tests are visible only as the run's own read-only copy. Other submissions and
other runs (the grader's other folders) are not visible at all. No cgroup is made: memory is
bounded per process (``RLIMIT_AS``), files by ``RLIMIT_FSIZE`` and the tmpfs sizes.
"""
import functools
import os
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

NOBODY = "65534"
TMPFS_MB = 128  # each private tmpfs (/tmp, /dev/shm, the working folder)
# /sys only for reading the CPU topology (hwloc in MPICH), read-only like the rest.
SYSTEM = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc", "/sys")
MASKED = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
HIDDEN = ("solutions", "graded", "tests", ".git", "mywork", "result")  # in the project: never shown
INSTALL = "apt-get install bubblewrap"


def find_bwrap():
    """The bwrap on PATH, or None."""
    return shutil.which("bwrap")


def namespaces():
    """bwrap's options for the namespaces and the user (see the module docstring)."""
    return ["--unshare-user", "--uid", NOBODY, "--gid", NOBODY, "--unshare-pid",
            "--unshare-net", "--unshare-ipc", "--unshare-uts", "--unshare-cgroup-try",
            "--die-with-parent", "--new-session", "--cap-drop", "ALL"]


def system_mounts(tmpfs_mb=TMPFS_MB):
    """The read-only system, /proc, /dev, and private /tmp and /dev/shm."""
    args = []
    for path in SYSTEM:
        args += ["--ro-bind-try", path, path]
    for path in MASKED:
        if os.path.exists(path):
            args += ["--ro-bind", "/dev/null", path]
    if os.path.isdir("/etc/ssl/private"):
        args += ["--tmpfs", "/etc/ssl/private"]
    size = str(tmpfs_mb << 20)
    args += ["--proc", "/proc", "--dev", "/dev", "--size", size, "--tmpfs", "/tmp",
             "--size", size, "--tmpfs", "/dev/shm"]
    return args


@functools.lru_cache(maxsize=1)
def unavailable():
    """None when a sandbox can be made here; else why not, in words that say what to do."""
    exe = find_bwrap()
    if exe is None:
        return f"bubblewrap (bwrap) is not installed; install it (`{INSTALL}`)"
    probe = [exe, *namespaces(), *system_mounts(), *_python_mounts(), "--", sys.executable,
             "-S", "-c", "import os; print(os.getuid())"]
    try:
        proc = subprocess.run(probe, capture_output=True, text=True, timeout=60, check=False)
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"bwrap could not run: {err}"
    if proc.returncode != 0 or proc.stdout.strip() != NOBODY:
        why = (proc.stderr.strip().splitlines() or ["no reason given"])[-1]
        return (f"bwrap cannot make a sandbox on this machine ({why}); it needs user "
                f"namespaces (sysctl kernel.unprivileged_userns_clone=1)")
    return None


def _python_mounts():
    """The Python that runs the ranks, its environment and where its interpreter lives."""
    paths = {sys.prefix, sys.base_prefix, str(Path(os.path.realpath(sys.executable)).parents[1])}
    args = []
    for path in sorted(paths):
        args += ["--ro-bind", path, path]
    return args


@dataclass
class Paths:
    """What one run shows: read-only ``bin``, ``tests``, ``submission``; writable ``run_dir``."""

    root: Path          # the project, shown read-only without HIDDEN
    bin: Path           # the grader's scripts for the ranks (pytest_in_rank.py, rankwrap.py, ...)
    tests: Path         # the run's copy of the lab's tests
    work: Path          # the working folder: a private tmpfs inside
    submission: Path    # the learner's answers, shown as work/submission.py
    run_dir: Path       # run files and result records: the one writable folder on disk
    mpiexec: str        # the launcher: its folder is shown read-only
    origin: Path = None  # where the submission came from: hidden when inside the project


def command(paths, tmpfs_mb=TMPFS_MB):
    """The bwrap command line to put before mpiexec's (``supervise.start(prefix=...)``)."""
    exe = find_bwrap()
    args = [exe, *namespaces(), *system_mounts(tmpfs_mb), *_python_mounts()]
    root = Path(paths.root)
    args += ["--ro-bind", str(root), str(root)]
    for name in HIDDEN:
        if (root / name).is_dir():
            args += ["--tmpfs", str(root / name)]
    if paths.origin is not None:
        origin = Path(paths.origin).resolve()
        if root in origin.parents and not any(origin in Path(p).parents for p in _prefixes()):
            args += ["--tmpfs", str(origin)]  # the other submissions beside this one
    package = str(Path(__file__).resolve().parents[2])  # the dlhack the ranks import (src/)
    args += ["--ro-bind", package, package]
    launcher = str(Path(paths.mpiexec).resolve().parent)
    args += ["--ro-bind", launcher, launcher, "--ro-bind", str(paths.bin), str(paths.bin),
             "--ro-bind", str(paths.tests), str(paths.tests),
             "--size", str(tmpfs_mb << 20), "--tmpfs", str(paths.work),
             "--ro-bind", str(paths.submission), str(Path(paths.work) / "submission.py"),
             "--bind", str(paths.run_dir), str(paths.run_dir),
             "--chdir", str(paths.work), "--"]
    return args


def _prefixes():
    return (sys.prefix, sys.base_prefix)
