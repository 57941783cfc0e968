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

How: the job is started, asked for stacks and killed by :mod:`dlhack.tools.supervise`, the
supervisor the grader uses too. Each rank runs in ``rankwrap.py`` (read its docstring), which
sends the rank's output to a file of its own, registers faulthandler on SIGUSR1 and for crashes,
and calls ``MPI_Abort`` on an uncaught exception, so one failing rank ends the job instead of
hanging it. At the end, everything the job started is killed, so nothing is left running.

From Python (the ``%%mpiexec`` magic does this)::

    result = run(["python", "script.py"], n=2, timeout=60)
    result.returncode, result.errors, result.waits
"""
import argparse
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field

from dlhack.tools import supervise
from dlhack.tools.mpiexec import find_mpiexec
from dlhack.tools.postmortem import explain, summarise
from dlhack.tools.runfiles import OutputFiles

POLL_S = 0.05  # how often the rank files are read: output appears within this delay
TIMEOUT_STATUS = 124  # as coreutils' `timeout`
INTERRUPT_STATUS = 130  # as a shell reports Ctrl-C


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
    crashes: dict = field(default_factory=dict)  # rank -> faulthandler dump at a fatal signal
    waits: dict = field(default_factory=dict)  # rank -> "waiting in comm.recv (job.py:9)"
    seconds: float = 0.0
    summary: str = ""


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
        job = start_job(cmd, n, single, mpiexec, run_dir)
        files = OutputFiles(run_dir)
        try:
            follow(job.proc, files, result, timeout, stream, prefix)
            if result.timed_out or result.interrupted:
                result.stacks = job.stacks()
        finally:
            job.kill()  # always, even after a second Ctrl-C: never leave a rank running
        result.returncode = job.proc.returncode
        if result.timed_out or result.interrupted:
            result.returncode = TIMEOUT_STATUS if result.timed_out else INTERRUPT_STATUS
        # After our own kill, mpiexec's "BAD TERMINATION" banner would mislead: kept, not shown.
        killed = result.timed_out or result.interrupted
        show(files.read(final=True), result, stream, prefix, quiet_launcher=killed)
        result.seconds = time.monotonic() - start
        explain(result, run_dir)  # reads the rank.N.done and .crash files, before they go
    result.summary = summarise(result, timeout)
    stream.write(result.summary + "\n")
    stream.flush()
    return result


def start_job(cmd, n, single, mpiexec, run_dir):
    """Start ``cmd`` on ``n`` ranks (or alone with ``single``); returns a supervise.Job."""
    if single:
        return supervise.start(cmd, run_dir)
    path = find_mpiexec() if mpiexec == "mpiexec" else shutil.which(mpiexec)
    if path is None:
        raise FileNotFoundError(f"no {mpiexec} on PATH: activate the course environment "
                                "(. .venv/bin/activate), or run `dlhack doctor`")
    return supervise.start(cmd, run_dir, n, mpiexec=path)


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
