"""The processes of one graded run: find them in /proc, get their stacks, kill them all.

    dump_stacks(private, ranks)     # SIGUSR1 to ranks; rank.py's faulthandler writes stack.RANK
    kill_all(proc, private, work)   # mpiexec, its descendants, anything left in our directories

Hydra (MPICH's mpiexec) starts every rank in a session of its own, so killing mpiexec's process
group would leave the ranks spinning; and a rank may start processes of its own. So the tree
under mpiexec is read from /proc before anything dies (orphans get reparented and lose the
link), each process's group is killed, then each process, then anything whose command line or
working directory is one of the run's directories. A pid from a rank's pid file is signalled
only while its command line still names the run's private directory: pids get reused.
Linux only, like the rest of the course: it reads /proc.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

POLL = 0.02


def dump_stacks(private, ranks):
    """SIGUSR1 to the ranks that never reported; wait (up to 1 s) for their stack dumps."""
    signalled = []
    for rank in ranks:
        pid = _rank_pid(private, rank)
        if pid is not None:
            try:
                os.kill(pid, signal.SIGUSR1)
                signalled.append(rank)
            except OSError:
                pass
    end = time.monotonic() + 1.0
    while time.monotonic() < end and not all(read_text(private / f"stack.{r}") for r in signalled):
        time.sleep(POLL)


def _rank_pid(private, rank):
    """The pid a rank wrote, if that process is still a rank of this run (no recycled pids)."""
    try:
        pid = int((private / f"pid.{rank}").read_text())
        cmdline = Path(f"/proc/{pid}/cmdline").read_bytes()
    except (OSError, ValueError):
        return None
    return pid if str(private).encode() in cmdline else None


def _processes():
    """``{pid: (ppid, cmdline, cwd)}`` of every process we can see, read from /proc."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            stat = Path(entry.path, "stat").read_text()
            cmdline = Path(entry.path, "cmdline").read_bytes()
            cwd = os.readlink(Path(entry.path, "cwd"))
        except OSError:
            continue
        table[int(entry.name)] = (int(stat.rsplit(")", 1)[1].split()[1]), cmdline, cwd)
    return table


def kill_all(proc, private, work):
    """Kill mpiexec, everything under it and anything still using our directories."""
    table = _processes()
    doomed, todo = {proc.pid}, [proc.pid]
    while todo:  # every descendant of mpiexec, found before anything dies and gets reparented
        parent = todo.pop()
        kids = [pid for pid, (ppid, _, _) in table.items() if ppid == parent and pid not in doomed]
        doomed.update(kids)
        todo += kids
    marks = (str(private).encode(), str(work).encode())
    doomed.update(pid for pid, (_, cmd, cwd) in table.items()
                  if any(m in cmd or m in cwd.encode() for m in marks))
    doomed.discard(os.getpid())
    own_group = os.getpgid(0)
    for pid in doomed:
        try:
            group = os.getpgid(pid)
            if group != own_group:
                os.killpg(group, signal.SIGKILL)
            os.kill(pid, signal.SIGKILL)
        except OSError:
            pass
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        pass


def read_text(path):
    try:
        return Path(path).read_text(errors="replace")
    except OSError:
        return ""
