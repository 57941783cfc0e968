"""``dlhack run``: run a command under mpiexec, each line marked with its rank; explain the end.

    dlhack run -n 2 -- python tests/tools/scripts/hello.py        # lines come out as "[1] ..."
    dlhack run -n 2 --timeout 5 -- python tests/tools/scripts/deadlock.py
    dlhack run --single -- python tests/tools/scripts/same_error.py  # one process, no mpiexec
    dlhack run -n 2 -- python -m dlhack.cli train ...             # `-m module` works too

After the job, a summary says what happened (tools/postmortem.py words it):

- the same error on every rank: it does not depend on the rank, reproduce it with ``--single``;
- an error on some ranks only: look for rank- or device-dependent code;
- a timeout (or Ctrl-C): the Python stack of every rank is dumped first, and the summary says which
  MPI call each rank waits in, e.g. "rank 0 is waiting in comm.recv (job.py:9)".

Running, supervising and reading the ranks' ends is the jobs room's (:mod:`dlhack.jobs.run`),
shared with the grader; nothing is left running afterwards. From Python (the ``%%mpiexec`` magic
and lesson 6 do this)::

    result = run(["python", "script.py"], n=2, timeout=60)   # the summary is printed too
    result.returncode, result.errors, result.summary
"""
import argparse
import sys

from dlhack.jobs.run import run as run_job
from dlhack.tools.postmortem import summarise


def run(cmd, n, timeout=None, single=False, stream=None, prefix=True, mpiexec="mpiexec"):
    """:func:`dlhack.jobs.run.run` (same arguments), then the summary written after the lines.

    Returns the ``jobs.run.RunResult``, with ``summary`` set to what was written.
    """
    stream = sys.stdout if stream is None else stream
    result = run_job(cmd, n, timeout=timeout, single=single, stream=stream, prefix=prefix,
                     mpiexec=mpiexec)
    result.summary = summarise(result)
    stream.write(result.summary + "\n")
    stream.flush()
    return result


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
