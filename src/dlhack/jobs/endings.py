"""How each rank of a job ended, read from the files the job left in its run folder.

    endings = classify(run_dir, n)                            # {rank: Ending}
    endings = classify(run_dir, n, output=lines)              # dlhack run: tracebacks too
    endings = classify(run_dir, n, records=records, file_limit=64 << 20)   # the grader

One rank, one :class:`Ending`, whose ``state`` is the first of these that holds:

=============  ===============================================================================
``reported``   the caller holds the rank's own record of how its work went (the grader's test
               records, ``records``)
``crashed``    a fatal signal (segfault, abort) made faulthandler write ``rank.N.crash``
``finished``   its code is over and exited 0 (``rank.N.done``)
``raised``     its code is over with another status: an uncaught exception, ``sys.exit(N)``
``waiting``    its stack dump (``rank.N.stack``, asked for by the supervisor) shows it blocked
               in an MPI call: ``call`` names it
``busy``       its stack dump shows it elsewhere: computing, sleeping, or outside Python
``gone``       it started (``rank.N.pid``) and left nothing more: killed, ``os._exit``, or not
               a Python process
``unstarted``  it never got as far as its own code (no pid file)
=============  ===============================================================================

``flooded`` is said beside the state: the rank's output reached ``file_limit``, or a write
failed for want of space. The words are the callers' own: ``dlhack run``'s summary
(:mod:`dlhack.tools.postmortem`) and the grader's verdict (:mod:`dlhack.grade.verdict`). Nothing
here starts or signals a process; reading the files costs a few small reads per rank.
"""
from dataclasses import dataclass

from dlhack.jobs import stacks
from dlhack.jobs.runfiles import read, run_file

ABORTED = "dlhack: rank {rank} raised"  # how rankwrap.py's line before MPI_Abort starts
STATES = ("reported", "crashed", "finished", "raised", "waiting", "busy", "gone", "unstarted")
FLOOD = "[Errno 27] File too large"  # what a write past RLIMIT_FSIZE raises in Python
# ... and what a write into a full tmpfs raises (several ranks flooding at once)
FLOOD_MARKS = (FLOOD, "[Errno 28] No space left on device")


@dataclass
class Ending:
    """How one rank ended; see the module docstring for the states."""

    rank: int
    state: str
    exit_status: int = None   # finished, raised: what ``rank.N.done`` holds
    dump: str = ""            # crashed: the fatal-signal dump; waiting, busy: the stack dump
    where: str = ""           # waiting, busy: ``stacks.where(dump)``; crashed: the crash's cause
    call: str = ""            # waiting: the blocking MPI call, e.g. ``comm.recv``
    error: stacks.Error = None  # the last traceback in its output (when output was given)
    aborted: bool = False     # it raised, then called MPI_Abort (rankwrap says so in its output)
    record: dict = None       # reported: the caller's record of it
    flooded: bool = False     # its output was cut at the file limit

    @property
    def frames(self):
        """The frames of ``dump``, innermost first, every thread in turn (stacks.Frame)."""
        return [frame for thread in stacks.parse_dump(self.dump) for frame in thread]


def classify(run_dir, n, records=None, output=None, file_limit=None):
    """``{rank: Ending}`` for ranks ``0 .. n-1`` of the job whose run folder is ``run_dir``.

    Args:
        run_dir: the job's run folder (runfiles.py names its files).
        n: the number of ranks.
        records: ``{rank: record}`` the caller already holds (the grader's test records).
        output: ``{rank: lines}`` the ranks printed (``dlhack run`` keeps them): their last
            traceback and whether they called MPI_Abort.
        file_limit: the most bytes a rank's output file may hold (the grader's RLIMIT_FSIZE).
    """
    records, output = records or {}, output or {}
    return {rank: _ending(run_dir, rank, records.get(rank), output.get(rank, []), file_limit)
            for rank in range(n)}


def _ending(run_dir, rank, record, lines, file_limit):
    crash, done = read(run_dir, "crash", rank), read(run_dir, "done", rank).strip()
    stack = read(run_dir, "stack", rank)
    ending = Ending(rank, "gone", error=stacks.last_error(lines),
                    aborted=any(line.startswith(ABORTED.format(rank=rank)) for line in lines),
                    flooded=_flooded(run_dir, rank, crash, file_limit))
    if record is not None:
        ending.state, ending.record = "reported", record
    elif crash.strip():
        ending.state, ending.dump, ending.where = "crashed", crash, stacks.crash_cause(crash)
    elif done:
        ending.exit_status = int(done) if done.lstrip("-").isdigit() else 1
        ending.state = "finished" if ending.exit_status == 0 else "raised"
    elif stack.strip():
        blocked = stacks.waiting_call(stacks.parse_dump(stack))
        ending.state = "waiting" if blocked else "busy"
        ending.dump, ending.where = stack, stacks.where(stack)
        ending.call = blocked[0] if blocked else ""
    elif not run_file(run_dir, "pid", rank).exists():
        ending.state = "unstarted"
    return ending


def _flooded(run_dir, rank, crash, file_limit):
    """Whether the rank's output reached ``file_limit``, or its crash was a write past it."""
    if file_limit is None:
        return False
    out = run_file(run_dir, "out", rank)
    return (out.exists() and out.stat().st_size >= file_limit) or FLOOD in crash


def ranks_text(ranks):
    """``rank 1`` or ``ranks 0, 2``: how both voices name a set of ranks."""
    ranks = sorted(ranks)
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(map(str, ranks))
