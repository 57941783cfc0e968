"""Explain how a ``dlhack run`` job ended, in the words a mentor would use at the table.

:func:`explain` reads what the ranks left (tracebacks, stack dumps, the ``rank.N.done`` and
``rank.N.crash`` files of ``rankwrap.py``) into a RunResult; :func:`summarise` turns that into
the summary printed after the job. The parsing itself is in :mod:`dlhack.tools.stacks`.
"""
from dlhack.tools.runfiles import read, run_file
from dlhack.tools.stacks import crash_cause, group_errors, is_wrapper_frame, last_error, where

SAME_EVERYWHERE = ("It does not depend on the rank: reproduce it with --single (one process, "
                   "no MPI) and debug it there.")
SOME_RANKS = ("Look for rank- or device-dependent code: `if rank == ...`, the data shard this "
              "rank got, its device id.")
DEADLOCK = ("A rank that waits in a receive or a collective that another rank never reaches is a "
            "deadlock: every rank must call the same collectives in the same order, and every "
            "recv needs a matching send.")
CRASHED = ("A crash is not a Python exception: C code (a C extension, MPI itself) got a fatal "
           "signal, or the code called os.abort(). The Python stack above shows the way in.")
NOT_IN_MPI = ("No rank waits in MPI: the job was busy or sleeping, not stuck on a message. If it "
              "is only slow, give it a longer --timeout.")


def explain(result, run_dir):
    """Fill in ``result.errors``, ``.aborted``, ``.crashes`` and, after a kill, ``.waits``."""
    for rank in range(result.n):
        dump = read(run_dir, "crash", rank)
        if dump.strip():
            result.crashes[rank] = dump
    errors = {rank: last_error(lines) for rank, lines in result.output.items()}
    result.errors = group_errors({rank: e for rank, e in errors.items() if e is not None})
    result.aborted = sorted(
        rank for rank, lines in result.output.items()
        if any(line.startswith(f"dlhack: rank {rank} raised") for line in lines))
    if not (result.timed_out or result.interrupted):
        return
    for rank in range(result.n):
        done = run_file(run_dir, "done", rank)
        if done.exists():
            result.waits[rank] = f"has finished its code (exit status {done.read_text()})"
        elif rank in result.crashes:
            result.waits[rank] = "crashed (see above)"
        elif result.stacks.get(rank):
            result.waits[rank] = where(result.stacks[rank])
        else:
            result.waits[rank] = "left no stack (not a Python process, or not started yet)"


def ranks_text(ranks):
    """``rank 1`` or ``ranks 0, 2``."""
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))


def error_lines(result):
    """One paragraph per group of identical errors."""
    lines = []
    for group in result.errors:
        error = group.message + (f" ({group.place})" if group.place else "")
        k = len(group.ranks)
        if result.n == 1:
            lines.append(f"error: {error}")
        elif k == result.n:
            lines += [f"the same error on {k} of {k} ranks: {error}", "  " + SAME_EVERYWHERE]
        else:
            only = " only" if k == 1 else ""
            lines += [f"on {ranks_text(group.ranks)}{only} ({k} of {result.n}): {error}",
                      "  " + SOME_RANKS]
    failed = {rank for group in result.errors for rank in group.ranks}
    healthy = [rank for rank in range(result.n) if rank not in failed]
    if result.aborted and healthy:
        lines.append(f"{ranks_text(result.aborted)} called MPI_Abort after the error, which "
                     f"stopped {ranks_text(healthy)}: those may have been fine.")
    return lines


def dump_lines(dumps):
    """``{rank: dump}`` as lines marked ``[rank]``, without the frames every rank has."""
    return [f"[{rank}] {line}" for rank, dump in sorted(dumps.items())
            for line in dump.splitlines() if line.strip() and not is_wrapper_frame(line)
            and not line.startswith("Extension modules:")]


def crash_lines(result):
    """Each crash's dump (it went to ``rank.N.crash``, not to the output), then its cause."""
    lines = dump_lines(result.crashes)
    lines += [f"rank {rank} crashed: {crash_cause(dump)}"
              for rank, dump in sorted(result.crashes.items())]
    return lines + ["  " + CRASHED]


def stack_lines(result, timeout):
    """The dumped stacks, then where each rank was."""
    lines = dump_lines(result.stacks)
    why = f"timed out after {timeout:g} s" if result.timed_out else "interrupted"
    lines.append(f"{why}: the job was killed. Where each rank was (stacks above):")
    lines += [f"  rank {rank} {text}" for rank, text in sorted(result.waits.items())]
    if any(text.startswith("is waiting in") for text in result.waits.values()):
        lines.append("  " + DEADLOCK)
    elif result.waits:
        lines.append("  " + NOT_IN_MPI)
    return lines


def summarise(result, timeout=None):
    """The summary printed after a job: what ended it and where to look next."""
    who = "one process (--single)" if result.single else f"{result.n} rank" + "s" * (result.n > 1)
    lines = [f"--- dlhack run: {who}, exit status {result.returncode}, {result.seconds:.1f} s ---"]
    if result.crashes:
        lines += crash_lines(result)
    if result.stacks or result.timed_out or result.interrupted:
        lines += stack_lines(result, timeout)
    lines += error_lines(result)
    if result.returncode == 0 and not (result.errors or result.crashes):
        lines.append("every rank finished." if result.n > 1 else "finished.")
    elif not (result.errors or result.crashes or result.timed_out or result.interrupted):
        lines.append("failed without a Python traceback: a rank was killed (out of memory? a "
                     "signal?) or mpiexec could not start it; read the [mpiexec] lines above.")
    return "\n".join(lines)
