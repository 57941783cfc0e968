"""The one supervisor of an MPI job: start its ranks, ask them for stacks, kill all it started.

    job = start(["python", "script.py"], run_dir, n=2)   # every rank runs inside rankwrap.py
    ...                                                  # read RUN_DIR's files (runfiles.py)
    dumps = job.stacks()                                 # {rank: faulthandler dump}
    job.kill()                                           # mpiexec, every rank, what they left

``dlhack run`` (jobs/run.py, and so the ``%%mpiexec`` magic) and the grader (grade/batch.py) both
run their jobs through here, so a fix to hang handling lands in both. The run folder's files are
named in runfiles.py; what each rank does before its own code is in rankwrap.py.

Why the kill reads /proc: hydra (MPICH's mpiexec) starts every rank in a session of its own, so
killing mpiexec's process group would leave the ranks running, and a rank may start processes
that double-fork out of its group. The sweep therefore

1. reads every process from /proc before anything dies (an orphan is handed to init and loses
   its link to mpiexec);
2. takes as the job's: mpiexec and its descendants (only while mpiexec is not yet reaped: a
   reaped pid may already be someone else's), anything whose command line or working directory
   names one of the job's folders, and anything whose environment carries the job's mark
   ``DLHACK_RUN_DIR=RUN_DIR`` (set for mpiexec, inherited by everything below it);
3. kills each such process's group, then the process; and looks again, for what forked meanwhile.

A pid read from a pid file is signalled only while that process is one of the job's by the same
test: once a rank has ended, its pid may be given to an unrelated process. Linux only.
"""
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from collections import namedtuple
from dataclasses import dataclass
from pathlib import Path

from dlhack.jobs.mpiexec import local_env, mpiexec_command, one_thread_env
from dlhack.jobs.runfiles import pid_files, read, run_file

WRAPPER = Path(__file__).with_name("rankwrap.py")
WRAPPER_FILES = ("rankwrap.py", "mpiexec.py", "runfiles.py")  # rankwrap loads the other two
MARK = "DLHACK_RUN_DIR"  # environment variable that marks every process of a job
POLL_S = 0.05  # how often a wait looks again
DUMP_WAIT_S = 2.0  # how long the ranks get to write their stacks after SIGUSR1
SWEEPS = 3  # kill rounds: a process may fork while the previous round runs
PYTHON = re.compile(r"python(\d+(\.\d+)?)?$")
# Sets RLIMIT_AS, RLIMIT_CPU, RLIMIT_FSIZE, then becomes the command; every rank inherits them.
# A separate interpreter, because preexec_fn is unsafe in a process with threads (the grader).
LIMITS = """import os, resource, sys
names = ("RLIMIT_AS", "RLIMIT_CPU", "RLIMIT_FSIZE")
for name, value, extra in zip(names, sys.argv[1:4], (0, 2, 0)):
    res = getattr(resource, name)
    soft, hard = int(value), int(value) + extra
    cap = resource.getrlimit(res)[1]
    if cap != resource.RLIM_INFINITY:
        soft, hard = min(soft, cap), min(hard, cap)
    resource.setrlimit(res, (soft, hard))
os.execvp(sys.argv[4], sys.argv[4:])
"""

# ppid and nspid (the pid in the process's own PID namespace) as ints; the rest bytes, as /proc
# gives them.
Process = namedtuple("Process", "ppid cmdline cwd environ nspid")


def wrap(cmd, run_dir, wrapper=WRAPPER):
    """The command each rank runs: ``python [options] rankwrap.py RUN_DIR script.py ...``.

    A command that is not Python runs as ``rankwrap.py RUN_DIR --exec COMMAND``.
    """
    exe, rest = cmd[0], list(cmd[1:])
    if not PYTHON.match(os.path.basename(exe)) and exe != sys.executable:
        return [sys.executable, str(wrapper), str(run_dir), "--exec", *cmd]
    options = []  # interpreter options such as -u or -X dev stay before the wrapper
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
        options.append(rest.pop(0))
        if options[-1] in ("-X", "-W") and rest:
            options.append(rest.pop(0))
    return [exe, *options, str(wrapper), str(run_dir), *rest]


def install_wrapper(folder):
    """Copy rankwrap.py and the files it loads into ``folder``; returns the copies' paths."""
    copies = [Path(folder, name) for name in WRAPPER_FILES]
    for copy in copies:
        shutil.copyfile(WRAPPER.with_name(copy.name), copy)
    return copies


def start(cmd, run_dir, n=None, *, wrapper=WRAPPER, mpiexec=None, cwd=None, env=None,
          threads=None, limits=None, folders=(), prefix=()):
    """Start ``cmd`` on ``n`` ranks under mpiexec, each inside rankwrap.py; returns a Job.

    Args:
        cmd: what every rank runs, e.g. ``["python", "script.py"]``.
        run_dir: an existing folder for the run's files (runfiles.py names them).
        n: the number of ranks; None runs ``cmd`` once, as a plain process without mpiexec.
        wrapper: the rankwrap.py to run (the grader's private copy).
        mpiexec: the launcher (default: jobs.mpiexec.find_mpiexec).
        cwd: the working directory (default: this process's).
        env: the environment to start from (default: this process's); the ranks start on this
            node whatever allocation it describes (``mpiexec.local_env``: an outer launcher's
            variables and the scheduler's node list are dropped), and the job's mark is added.
        threads: BLAS threads per rank, or None to keep ``env``'s settings (``dlhack run``
            shows the learner's environment as it is; the grader passes 1).
        limits: ``(address space bytes, CPU seconds, file bytes)`` for every process, or None.
        folders: more folders that the job's processes name in their command line or use as
            working directory (the grader's work folder); the kill sweep looks for them.
        prefix: a command that runs the whole job inside it, e.g. the grader's sandbox
            (``bwrap ... --``). A rank's pid file then holds its pid in the sandbox's PID
            namespace; ``Job.pids`` maps it back.
    """
    argv = wrap(list(cmd), run_dir, wrapper)
    env = local_env(os.environ if env is None else env)
    if n is None:
        env = one_thread_env(env, threads)
    else:
        argv, env = mpiexec_command(n, argv, env=env, threads=threads, mpiexec=mpiexec)
    env.update({MARK: str(run_dir), "PYTHONUNBUFFERED": "1"})  # prints reach files before a kill
    if limits is not None:
        argv = [sys.executable, "-S", "-c", LIMITS, *map(str, limits), *argv]
    argv = [*map(str, prefix), *argv]
    with open(run_file(run_dir, "out"), "wb") as out:
        proc = subprocess.Popen(argv, cwd=cwd, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
    return Job(proc, Path(run_dir), tuple(Path(folder) for folder in folders))


def process_table():
    """``{pid: Process}`` of every live process this user can read, from /proc; no zombies."""
    table = {}
    for entry in os.scandir("/proc"):
        if not entry.name.isdigit():
            continue
        try:
            state, ppid = Path(entry.path, "stat").read_text().rsplit(")", 1)[1].split()[:2]
            cmdline = Path(entry.path, "cmdline").read_bytes()
        except (OSError, ValueError):
            continue  # gone meanwhile
        if state == "Z":
            continue  # a zombie can neither dump nor be killed, and has no children left
        table[int(entry.name)] = Process(int(ppid), cmdline, _readlink(Path(entry.path, "cwd")),
                                         _read_bytes(Path(entry.path, "environ")),
                                         _nspid(entry.path, int(entry.name)))
    return table


def descendants(table, root):
    """``root`` and every process below it in ``table``."""
    children = {}
    for pid, process in table.items():
        children.setdefault(process.ppid, []).append(pid)
    found, todo = {root}, [root]
    while todo:
        for kid in children.get(todo.pop(), []):
            if kid not in found:
                found.add(kid)
                todo.append(kid)
    return found & set(table)


@dataclass
class Job:
    """A started job: mpiexec's Popen, its run folder and the other folders that mark it."""

    proc: subprocess.Popen
    run_dir: Path
    folders: tuple = ()

    def members(self, table):
        """The pids in ``table`` that belong to this job (see the module docstring)."""
        found = set()
        if self.proc.returncode is None:  # not reaped, so proc.pid is still mpiexec's
            found = descendants(table, self.proc.pid)
        marks = [os.fsencode(folder) for folder in (self.run_dir, *self.folders)]
        tag = os.fsencode(f"{MARK}={self.run_dir}")
        for pid, process in table.items():
            if (tag in process.environ.split(b"\0")
                    or any(m in process.cmdline or _inside(process.cwd, m) for m in marks)):
                found.add(pid)
        found.discard(os.getpid())
        return found

    def pids(self):
        """``{rank: pid}`` of the ranks whose pid file names a live process of this job.

        The pid is this machine's: a rank in a PID namespace of its own (a sandbox) writes the
        namespace's pid, which only a member of this job can carry as its ``NSpid``.
        """
        table = process_table()
        members = self.members(table)
        inner = {table[pid].nspid: pid for pid in members if table[pid].nspid != pid}
        found = {}
        for rank, pid in pid_files(self.run_dir).items():
            if pid in inner:
                found[rank] = inner[pid]
            elif pid in members:
                found[rank] = pid
        return found

    def stacks(self, ranks=None, wait_s=DUMP_WAIT_S):
        """Ask ``ranks`` (default: all) for their Python stacks; returns ``{rank: dump}``.

        SIGUSR1 goes only to a live rank of this job that has a handler for it (rankwrap made
        its ``rank.N.stack``; a rank started with ``--exec`` has none) and whose code is not over
        (``rank.N.done``): after that, Python's handlers are gone and SIGUSR1 would kill it, and
        hydra the other ranks before they dump. Waits up to ``wait_s`` for the dumps.
        """
        asked = []
        for rank, pid in self.pids().items():
            if ranks is not None and rank not in ranks:
                continue
            if (not run_file(self.run_dir, "stack", rank).exists()
                    or run_file(self.run_dir, "done", rank).exists()):
                continue
            try:
                os.kill(pid, signal.SIGUSR1)
                asked.append(rank)
            except ProcessLookupError:
                pass  # it ended just now
        deadline = time.monotonic() + wait_s
        while asked and time.monotonic() < deadline and not all(
                read(self.run_dir, "stack", rank) for rank in asked):
            time.sleep(POLL_S)
        if asked:
            time.sleep(0.2)  # a dump is written in several writes: let the last ones land
        return {rank: read(self.run_dir, "stack", rank) for rank in asked}

    def kill(self):
        """Kill every process of the job and its group; returns once mpiexec is reaped.

        Call it after a normal end too: it takes down what a rank left running.
        """
        own_group = os.getpgid(0)
        for _ in range(SWEEPS):
            doomed = self.members(process_table())
            if not doomed:
                break
            for pid in doomed:
                try:
                    group = os.getpgid(pid)
                    if group != own_group:
                        os.killpg(group, signal.SIGKILL)
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass  # gone already, or not ours to kill
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass


def _nspid(proc_dir, pid):
    """The process's pid in its innermost PID namespace (``NSpid`` in /proc/PID/status)."""
    try:
        for line in Path(proc_dir, "status").read_text().splitlines():
            if line.startswith("NSpid:"):
                return int(line.split()[-1])
    except (OSError, ValueError, IndexError):
        pass
    return pid


def _inside(path, folder):
    return path == folder or path.startswith(folder + b"/")


def _readlink(path):
    try:
        return os.fsencode(os.readlink(path))
    except OSError:
        return b""


def _read_bytes(path):
    try:
        return Path(path).read_bytes()
    except OSError:
        return b""
