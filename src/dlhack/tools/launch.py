"""``dlhack run``: run a command under mpiexec, each line marked with its rank; explain the end.

    dlhack run -n 2 -- python tests/tools/scripts/hello.py        # lines come out as "[1] ..."
    dlhack run -n 2 --timeout 5 -- python tests/tools/scripts/deadlock.py
    dlhack run --single -- python tests/tools/scripts/same_error.py  # one process, no mpiexec
    dlhack run -n 2 -- python -m dlhack.cli train ...             # `-m module` works too

After the job, a summary says what happened:

- the same error on every rank: it does not depend on the rank, reproduce it with ``--single``;
- an error on some ranks only: look for rank- or device-dependent code;
- a timeout (or Ctrl-C): the Python stack of every rank is dumped first, and the summary says which
  MPI call each rank waits in, e.g. "rank 0 is waiting in comm.recv (job.py:9)".

How: each rank runs in ``rankwrap.py`` (read its docstring), which sends the rank's output to a
file of its own, registers faulthandler on SIGUSR1 and calls ``MPI_Abort`` on an uncaught
exception, so one failing rank ends the job instead of hanging it. mpiexec runs in a session of
its own; at the end, every rank and mpiexec are killed, so nothing is left running.

From Python (the ``%%mpiexec`` magic does this)::

    result = run(["python", "script.py"], n=2, timeout=60)
    result.returncode, result.errors, result.waits
"""
import argparse
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from dlhack.tools.mpiexec import find_mpiexec
from dlhack.tools.postmortem import explain, summarise

WRAPPER = Path(__file__).with_name("rankwrap.py")
POLL_S = 0.05  # how often the rank files are read: output appears within this delay
DUMP_WAIT_S = 2.0  # how long the ranks get to write their stacks after SIGUSR1
TIMEOUT_STATUS = 124  # as coreutils' `timeout`
INTERRUPT_STATUS = 130  # as a shell reports Ctrl-C
PYTHON = re.compile(r"python(\d+(\.\d+)?)?$")


@dataclass
class RunResult:
    """What a job did. ``output[rank]`` are its lines; ``errors`` its grouped tracebacks."""

    returncode: int
    n: int
    single: bool = False
    output: dict = field(default_factory=dict)  # rank -> lines, without the "[rank]" prefix
    launcher_output: list = field(default_factory=list)  # mpiexec's own lines
    errors: list = field(default_factory=list)  # ErrorGroups, see dlhack.tools.stacks
    aborted: list = field(default_factory=list)  # ranks that called MPI_Abort after an error
    timed_out: bool = False
    interrupted: bool = False
    stacks: dict = field(default_factory=dict)  # rank -> faulthandler dump
    waits: dict = field(default_factory=dict)  # rank -> "waiting in comm.recv (job.py:9)"
    seconds: float = 0.0
    summary: str = ""


def wrap(cmd, run_dir):
    """The command each rank runs: ``python [options] rankwrap.py RUN_DIR script.py ...``."""
    exe, rest = cmd[0], list(cmd[1:])
    if not PYTHON.match(os.path.basename(exe)) and exe != sys.executable:
        return [sys.executable, str(WRAPPER), run_dir, "--exec", *cmd]
    options = []  # interpreter options such as -u or -X dev stay before the wrapper
    while rest and rest[0].startswith("-") and rest[0] not in ("-m", "-c"):
        options.append(rest.pop(0))
        if options[-1] in ("-X", "-W") and rest:
            options.append(rest.pop(0))
    return [exe, *options, str(WRAPPER), run_dir, *rest]


class RankFiles:
    """Follows ``rank.N.out`` and ``mpiexec.out`` in a run folder like ``tail -f``, line by line."""

    def __init__(self, run_dir):
        self.run_dir = Path(run_dir)
        self.offsets, self.partial = {}, {}

    def read(self, final=False):
        """New complete lines as (source, text); source is a rank number or "mpiexec"."""
        lines = []
        for path in sorted(self.run_dir.glob("*.out")):
            source = int(path.name.split(".")[1]) if path.name.startswith("rank.") else "mpiexec"
            with open(path, "rb") as f:
                f.seek(self.offsets.get(path, 0))
                data = f.read()
                self.offsets[path] = f.tell()
            # Split bytes, decode whole lines: a read can end inside a Japanese character.
            *complete, rest = (self.partial.pop(path, b"") + data).split(b"\n")
            if rest and final:
                complete.append(rest)
            elif rest:
                self.partial[path] = rest
            lines += [(source, line.decode(errors="replace").rstrip("\r")) for line in complete]
        return lines


def rank_pids(run_dir):
    """{rank: pid} from the ``rank.N.pid`` files the wrappers wrote."""
    pids = {}
    for path in Path(run_dir).glob("rank.*.pid"):
        text = path.read_text().strip()
        if text.isdigit():
            pids[int(path.name.split(".")[1])] = int(text)
    return pids


def signal_ranks(run_dir, signum, group=False, skip=()):
    """Send ``signum`` to every rank but those in ``skip``, or with ``group`` to its group.

    hydra makes each rank the leader of a session of its own, out of reach of a signal sent to
    mpiexec's group; a rank's group also holds the processes that the rank started. (Where ranks
    lead no group, under other launchers, they stay in mpiexec's group, which stop() kills.)
    """
    for rank, pid in rank_pids(run_dir).items():
        if rank in skip:
            continue
        try:
            if group:
                os.killpg(pid, signum)
            else:
                os.kill(pid, signum)
        except ProcessLookupError:
            pass  # that rank (or its group) has already ended


def is_alive(pid):
    """True while process ``pid`` exists (signal 0 checks without sending anything)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    return True


def collect_stacks(run_dir):
    """Ask every rank for its stack (SIGUSR1 -> faulthandler) and return {rank: dump}."""
    # A rank whose code is over (rank.N.done) has left Python's handlers behind: SIGUSR1 would
    # kill it, and hydra would then kill the others before they dump. It is not asked.
    pids = rank_pids(run_dir)
    done = {rank for rank in pids if Path(run_dir, f"rank.{rank}.done").exists()}
    signal_ranks(run_dir, signal.SIGUSR1, skip=done)
    paths = {rank: Path(run_dir, f"rank.{rank}.stack") for rank in pids if rank not in done}
    waiting = [path for rank, path in paths.items() if is_alive(pids[rank])]
    deadline = time.monotonic() + DUMP_WAIT_S
    while time.monotonic() < deadline and not all(p.stat().st_size for p in waiting):
        time.sleep(POLL_S)
    time.sleep(0.2)  # a dump is written in several writes: let the last ones land
    return {rank: path.read_text() for rank, path in sorted(paths.items())}


def stop(proc, run_dir):
    """Kill every rank, then mpiexec and its process group; returns once mpiexec is gone.

    Also called after a normal end, to take down what a rank may have left running. Signalling
    the group of a rank that has ended is safe: Linux never hands out a pid that is still some
    group's id, so such a group can only be that rank's leftovers.
    """
    signal_ranks(run_dir, signal.SIGKILL, group=True)
    try:
        os.killpg(proc.pid, signal.SIGTERM)  # hydra cleans up its proxies on SIGTERM
        proc.wait(timeout=3)
    except (ProcessLookupError, subprocess.TimeoutExpired):
        pass
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()


def run(cmd, n, timeout=None, single=False, stream=None, prefix=True, mpiexec="mpiexec"):
    """Run ``cmd`` on ``n`` ranks under mpiexec (or once with ``single``) and explain the end.

    Args:
        cmd: the command as a list, e.g. ``["python", "script.py"]``.
        n: the number of ranks (ignored with ``single``).
        timeout: seconds before the stacks are dumped and the job killed; None waits forever.
        single: run ``cmd`` as one plain process, without mpiexec.
        stream: where lines go as they arrive, marked ``[rank]``; default ``sys.stdout`` at call
            time (the notebook's output inside the magic). The summary is written there too.
        prefix: mark each line with its rank.
        mpiexec: the launcher to use, looked up on PATH.

    Returns:
        A RunResult. Ctrl-C (KeyboardInterrupt) dumps the stacks, kills the job and returns a
        result with ``interrupted`` set and returncode 130.
    """
    stream = sys.stdout if stream is None else stream
    n = 1 if single else n
    result = RunResult(returncode=0, n=n, single=single, output={rank: [] for rank in range(n)})
    with tempfile.TemporaryDirectory(prefix="dlhack-run-") as run_dir:
        start = time.monotonic()
        proc = start_job(cmd, n, single, mpiexec, run_dir)
        files = RankFiles(run_dir)
        try:
            follow(proc, files, result, timeout, stream, prefix)
            if result.timed_out or result.interrupted:
                result.stacks = collect_stacks(run_dir)
        finally:
            stop(proc, run_dir)  # always, even after a second Ctrl-C: never leave a rank running
        result.returncode = proc.returncode
        if result.timed_out or result.interrupted:
            result.returncode = TIMEOUT_STATUS if result.timed_out else INTERRUPT_STATUS
        # After our own kill, mpiexec's "BAD TERMINATION" banner would mislead: kept, not shown.
        killed = result.timed_out or result.interrupted
        show(files.read(final=True), result, stream, prefix, quiet_launcher=killed)
        result.seconds = time.monotonic() - start
        explain(result, run_dir)  # reads the rank.N.done files, so before they are deleted
    result.summary = summarise(result, timeout)
    stream.write(result.summary + "\n")
    stream.flush()
    return result


def start_job(cmd, n, single, mpiexec, run_dir):
    """Start ``cmd`` on ``n`` ranks (or alone), in a session of its own; returns the Popen."""
    argv = wrap(list(cmd), run_dir)
    if not single:
        path = find_mpiexec() if mpiexec == "mpiexec" else shutil.which(mpiexec)
        if path is None:
            raise FileNotFoundError(f"no {mpiexec} on PATH: activate the course environment "
                                    "(. .venv/bin/activate), or run `dlhack doctor`")
        argv = [path, "-n", str(n), *argv]
    env = dict(os.environ, PYTHONUNBUFFERED="1")  # prints reach the files before any kill
    with open(Path(run_dir, "mpiexec.out"), "wb") as launcher_out:
        return subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=launcher_out,
                                stderr=subprocess.STDOUT, env=env, start_new_session=True)


def follow(proc, files, result, timeout, stream, prefix):
    """Show the ranks' lines until the job ends, the timeout passes or Ctrl-C is pressed."""
    start = time.monotonic()
    try:
        while proc.poll() is None:
            show(files.read(), result, stream, prefix)
            if timeout is not None and time.monotonic() - start > timeout:
                result.timed_out = True
                break
            time.sleep(POLL_S)
    except KeyboardInterrupt:
        result.interrupted = True
    show(files.read(), result, stream, prefix)


def show(lines, result, stream, prefix, quiet_launcher=False):
    """Write new lines to ``stream`` (marked with their rank) and keep them in ``result``."""
    for source, text in lines:
        if source == "mpiexec":
            result.launcher_output.append(text)
            if quiet_launcher:
                continue
        else:
            result.output.setdefault(source, []).append(text)
        stream.write(f"[{source}] {text}\n" if prefix else text + "\n")
    if lines:
        stream.flush()


def main(argv=None):
    """``dlhack run``: parse the arguments, run the job, return its exit status."""
    parser = argparse.ArgumentParser(
        prog="dlhack run",
        description="Run COMMAND under mpiexec with rank-marked output, then explain the end.",
        epilog="example: dlhack run -n 2 --timeout 60 -- python script.py")
    parser.add_argument("-n", "--np", type=int, default=2, help="number of ranks (default 2)")
    parser.add_argument("-t", "--timeout", type=float, default=None,
                        help="seconds before stacks are dumped and the job killed (default: none)")
    parser.add_argument("-s", "--single", action="store_true",
                        help="run COMMAND as one process without mpiexec")
    parser.add_argument("--no-prefix", action="store_true", help="do not mark lines with [rank]")
    parser.add_argument("--mpiexec", default="mpiexec", help="the mpiexec to use (default: PATH's)")
    parser.add_argument("command", nargs=argparse.REMAINDER, help="the command, after --")
    args = parser.parse_args(argv)
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command:
        parser.error("no COMMAND given: dlhack run -n 2 -- python script.py")
    try:
        result = run(command, args.np, timeout=args.timeout, single=args.single,
                     prefix=not args.no_prefix, mpiexec=args.mpiexec)
    except FileNotFoundError as exc:  # no mpiexec, or no such command with --single
        print(f"dlhack run: {exc}", file=sys.stderr)
        return 127  # as a shell says "command not found"
    return result.returncode


if __name__ == "__main__":
    sys.exit(main())
