"""How a ``dlhack run`` job ended, in the words a mentor would use at the table.

    print(summarise(result))   # result: a jobs.run.RunResult; ``dlhack run`` prints this

Only words: which rank ended how is :mod:`dlhack.jobs.endings`' classification (the grader's
verdict words the same classification in its own voice), and the tracebacks and stack dumps are
read by :mod:`dlhack.jobs.stacks`.
"""
from dlhack.jobs.endings import ranks_text
from dlhack.jobs.stacks import is_wrapper_frame

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
NO_STACK = "left no stack (not a Python process, or not started yet)"


def where_each_rank_was(result):
    """``{rank: "is waiting in comm.recv (job.py:9)"}``, said of a job that was killed."""
    said = {}
    for rank, ending in sorted(result.endings.items()):
        if ending.state in ("finished", "raised"):
            said[rank] = f"has finished its code (exit status {ending.exit_status})"
        elif ending.state == "crashed":
            said[rank] = "crashed (see above)"
        else:
            said[rank] = ending.where or NO_STACK  # waiting, busy: stacks.where's words
    return said


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
    lines += [f"rank {rank} crashed: {ending.where}"
              for rank, ending in sorted(result.endings.items()) if ending.state == "crashed"]
    return lines + ["  " + CRASHED]


def stack_lines(result):
    """The dumped stacks, then where each rank was."""
    lines = dump_lines(result.stacks)
    why = f"timed out after {result.timeout:g} s" if result.timed_out else "interrupted"
    lines.append(f"{why}: the job was killed. Where each rank was (stacks above):")
    lines += [f"  rank {rank} {text}" for rank, text in where_each_rank_was(result).items()]
    if any(ending.state == "waiting" for ending in result.endings.values()):
        lines.append("  " + DEADLOCK)
    elif result.endings:
        lines.append("  " + NOT_IN_MPI)
    return lines


def summarise(result):
    """The summary printed after a job: what ended it and where to look next."""
    who = "one process (--single)" if result.single else f"{result.n} rank" + "s" * (result.n > 1)
    lines = [f"--- dlhack run: {who}, exit status {result.returncode}, {result.seconds:.1f} s ---"]
    if result.crashes:
        lines += crash_lines(result)
    if result.stacks or result.timed_out or result.interrupted:
        lines += stack_lines(result)
    lines += error_lines(result)
    if result.returncode == 0 and not (result.errors or result.crashes):
        lines.append("every rank finished." if result.n > 1 else "finished.")
    elif not (result.errors or result.crashes or result.timed_out or result.interrupted):
        lines.append("failed without a Python traceback: a rank was killed (out of memory? a "
                     "signal?) or mpiexec could not start it; read the [mpiexec] lines above.")
    return "\n".join(lines)
