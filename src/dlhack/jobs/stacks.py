"""Read what the ranks of a job leave behind: tracebacks and faulthandler stack dumps.

Two questions a mentor asks first about a failed MPI run, answered from text alone:

- Did every rank fail the same way? :func:`last_error` takes the final line of a rank's last
  traceback (``ZeroDivisionError: division by zero``) and :func:`group_errors` groups the ranks
  that share it. The same error everywhere does not depend on the rank: run one process and
  debug it there. An error on some ranks only points at rank- or device-dependent code.
- Where is each rank stuck? :func:`where` reads a faulthandler dump (``kill -USR1`` on a rank
  started by ``dlhack run`` or the grader) and names the MPI call it waits in, e.g.
  ``comm.recv (job.py:12)``. mpi4py's methods are compiled, so they never appear as frames: the
  call is read from the source line of the frame that made it. :func:`parse_dump` is the one
  reader of such dumps (and of the crash dumps in ``rank.N.crash``); :data:`FRAME` the one frame
  pattern, for tracebacks too.

Used by :mod:`dlhack.jobs.endings`, which classifies each rank's end for ``dlhack run``'s
summary and the grader's verdict alike; nothing here starts a process.
"""
import linecache
import os
import re
from dataclasses import dataclass, field

# A frame line, in a traceback ('File "x.py", line 7, in f') or a faulthandler dump (no comma).
FRAME = re.compile(r'^\s*File "(?P<file>.+)", line (?P<line>\d+),? in (?P<func>.+)$')
THREAD = re.compile(r"^(Current thread|Thread) 0x[0-9a-fA-F]+")

# Methods that block until other ranks take part: mpi4py (lower- and upper-case), ChainerMN.
BLOCKING_CALLS = {
    "send", "ssend", "recv", "sendrecv", "probe", "mprobe", "wait", "waitall", "waitany",
    "waitsome", "barrier", "bcast", "scatter", "scatterv", "gather", "gatherv", "allgather",
    "allgatherv", "alltoall", "alltoallv", "reduce", "allreduce", "reduce_scatter",
    "reduce_scatter_block", "scan", "exscan",
    "send_obj", "recv_obj", "bcast_obj", "gather_obj", "allreduce_obj", "bcast_data",
    "allreduce_grad", "multi_node_mean_grad", "scatter_dataset",
}
CALL = re.compile(r"(?P<obj>\b[A-Za-z_][\w.]*\.)?(?P<name>[A-Za-z_]\w*)\s*\(")


@dataclass
class Frame:
    """One frame of a stack: where it is and the source line there (read from disk)."""

    file: str
    line: int
    func: str

    @property
    def place(self):
        return f"{os.path.basename(self.file)}:{self.line}"

    @property
    def source(self):
        return linecache.getline(self.file, self.line).strip()

    @property
    def is_library(self):
        """True for frames in installed packages or the standard library, not learner code."""
        path = self.file.replace("\\", "/")
        return "-packages/" in path or "/lib/python" in path or path.endswith("rankwrap.py")


@dataclass
class Error:
    """The last line of a traceback (``TypeError: ...``) and the frame that raised it."""

    message: str
    place: str = ""


@dataclass
class ErrorGroup:
    """One error message and the ranks that raised it."""

    message: str
    place: str
    ranks: list = field(default_factory=list)


def last_error(lines):
    """The error that ended a rank: the last traceback in ``lines``, or None without one."""
    starts = [i for i, text in enumerate(lines) if text.startswith("Traceback (most recent call")]
    if not starts:
        return None
    place = ""
    for text in lines[starts[-1] + 1:]:
        match = FRAME.match(text)
        if match:
            place = f"{os.path.basename(match['file'])}:{match['line']}"
        elif text and not text[0].isspace():
            return Error(normalise(text), place)  # the first unindented line is the error
    return Error("(traceback without a final error line)", place)


def normalise(message):
    """Drop what differs between identical errors: object addresses and spacing."""
    message = re.sub(r"0x[0-9a-fA-F]+", "0x...", message)
    return " ".join(message.split())


def group_errors(errors):
    """Group ``{rank: Error}`` into ErrorGroups, identical errors together, by first rank."""
    groups = {}
    for rank in sorted(errors):
        error = errors[rank]
        key = (error.message, error.place)
        groups.setdefault(key, ErrorGroup(error.message, error.place)).ranks.append(rank)
    return sorted(groups.values(), key=lambda group: group.ranks[0])


def is_wrapper_frame(line):
    """True for the frames of dlhack's rank wrapper and runpy, which every rank has."""
    match = FRAME.match(line)
    return bool(match) and (match["file"].endswith("rankwrap.py") or "runpy" in match["file"])


def parse_dump(text):
    """Split a faulthandler dump into threads: a list of frame lists, innermost frame first."""
    threads = []
    for line in text.splitlines():
        if THREAD.match(line) or (line.startswith("Stack (most recent") and not threads):
            threads.append([])
            continue
        match = FRAME.match(line)
        if match and threads:
            threads[-1].append(Frame(match["file"], int(match["line"]), match["func"].strip()))
    return threads


def blocking_call(frame):
    """The blocking MPI call written on ``frame``'s source line (``comm.recv``), or None."""
    for match in CALL.finditer(frame.source):
        if match["name"].lower() in BLOCKING_CALLS:
            return (match["obj"] or "") + match["name"]
    return None


def waiting_call(threads):
    """The first blocking MPI call in ``threads`` (``parse_dump``'s), or None.

    Returns ``(call, frame, caller)``: the call as written (``comm.recv``), the frame whose line
    makes it, and, when that frame is a library's, the learner's frame that called it (or None).
    """
    for frames in threads:
        for i, frame in enumerate(frames):
            call = blocking_call(frame)
            if call:
                caller = next((f for f in frames[i + 1:] if not f.is_library), None)
                return call, frame, caller if frame.is_library else None
    return None


def where(dump):
    """Say where a rank is from its faulthandler dump: ``is waiting in comm.recv (a.py:9)``.

    Looks at every thread, innermost frame first, for a line that makes a blocking MPI call;
    the first one found is the answer. Without one, names the innermost frame of the learner's
    code (the rank computes, sleeps or waits on something that is not MPI).
    """
    threads = parse_dump(dump)
    blocked = waiting_call(threads)
    if blocked:
        call, frame, caller = blocked
        return (f"is waiting in {call} ({frame.place})"
                + (f", called from {caller.place}" if caller else ""))
    frame = learner_frame(threads)
    if frame is None:
        return "is outside Python code (in MPI_Finalize, or exiting)"
    return f"is not in an MPI call but in {frame.func} ({frame.place})"


def learner_frame(threads):
    """The innermost frame of learner code in ``threads`` (else the innermost of all), or None."""
    frames = [f for frames in threads for f in frames]
    return next((f for f in frames if not f.is_library), frames[0] if frames else None)


def crash_cause(dump):
    """What a fatal-signal dump says and where: ``Fatal Python error: Aborted in f (a.py:3)``."""
    lines = [line.strip() for line in dump.splitlines() if line.strip()]
    cause = lines[0] if lines else "killed"
    frame = learner_frame(parse_dump(dump))
    return cause + (f" in {frame.func} ({frame.place})" if frame else "")
