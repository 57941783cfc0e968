"""The files of one job's run folder: one naming scheme for the wrapper that writes them and the
supervisors (``dlhack run``, the grader) that read them.

    RUN_DIR/rank.N.out     everything rank N printed (stdout and stderr; C code and children too)
    RUN_DIR/rank.N.pid     rank N's process id, written once its SIGUSR1 handler is in place
    RUN_DIR/rank.N.stack   rank N's Python stacks, written by faulthandler on each SIGUSR1
    RUN_DIR/rank.N.crash   rank N's Python stacks at a fatal signal (segfault, abort)
    RUN_DIR/rank.N.done    rank N's exit status, once its own code is over
    RUN_DIR/mpiexec.out    what mpiexec itself printed

Readers that only want a file's end (``read``, ``tail``, ``output_tail``) read it from the end,
within a fixed budget: what a rank prints never decides how much memory its supervisor needs.

``rankwrap.py`` writes the ``rank.N.*`` files (read its docstring). It runs by its path without
the dlhack package, so this module uses the standard library only: the wrapper loads this very
file by its path too.
"""
from pathlib import Path

LAUNCHER = "mpiexec"  # the source name of mpiexec's own output
# Bytes read from the end of a run file that a grader reads whole (stacks, crash dumps): a
# rank can write up to the file limit into any of them.
READ_BUDGET = 1 << 20


def run_file(run_dir, kind, rank=None):
    """``RUN_DIR/rank.RANK.KIND``, or ``RUN_DIR/mpiexec.KIND`` for mpiexec's (``rank=None``)."""
    return Path(run_dir, f"{LAUNCHER if rank is None else f'rank.{rank}'}.{kind}")


def parse_name(name):
    """``(source, kind)`` of a run file name: ``(3, "out")``, ``("mpiexec", "out")`` or None."""
    parts = name.split(".")
    if len(parts) == 3 and parts[0] == "rank" and parts[1].isdigit():
        return int(parts[1]), parts[2]
    if len(parts) == 2 and parts[0] == LAUNCHER:
        return LAUNCHER, parts[1]
    return None


def files_of(run_dir, kind):
    """``{source: path}`` of every ``KIND`` file in the run folder, ranks in order."""
    found = {}
    for path in Path(run_dir).glob(f"*.{kind}"):
        parsed = parse_name(path.name)
        if parsed is not None and parsed[1] == kind:
            found[parsed[0]] = path
    ranks = sorted(source for source in found if source != LAUNCHER)  # rank 10 after rank 2
    return {source: found[source] for source in [*ranks, LAUNCHER] if source in found}


def tail(path, budget=READ_BUDGET):
    """The last ``budget`` bytes or so of the file at ``path`` as text ("" when there is none).

    Read from the end: however much a rank wrote, this costs ``budget`` bytes. A cut is made at
    a line's start, unless the last line alone is longer.
    """
    try:
        with open(path, "rb") as f:
            size = f.seek(0, 2)
            f.seek(max(0, size - budget))
            data = f.read(budget)
    except OSError:
        return ""
    if size > budget:
        cut = data.find(b"\n")
        data = data[cut + 1:] if 0 <= cut < len(data) - 1 else data
    return data.decode(errors="replace")


def read(run_dir, kind, rank=None, budget=READ_BUDGET):
    """The text of one run file (its end, past ``budget`` bytes), or "" when there is none."""
    return tail(run_file(run_dir, kind, rank), budget)


def pid_files(run_dir):
    """``{rank: pid}`` as the ``rank.N.pid`` files say; nothing here checks the process."""
    pids = {}
    for rank, path in files_of(run_dir, "pid").items():
        text = path.read_text().strip()
        if rank != LAUNCHER and text.isdigit():
            pids[rank] = int(text)
    return pids


class OutputFiles:
    """Follows every ``*.out`` file of a run folder like ``tail -f``, line by line."""

    def __init__(self, run_dir):
        self.run_dir = Path(run_dir)
        self.offsets, self.partial = {}, {}

    def read(self, final=False):
        """New complete lines as (source, text); source is a rank number or "mpiexec"."""
        lines = []
        for source, path in files_of(self.run_dir, "out").items():
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


def output_tail(run_dir, limit=3000):
    """The end of every ``*.out`` file, each line marked ``[source]``, in about ``limit`` chars.

    Every source gets an equal share, so one chatty rank cannot push out the line of the rank
    that failed, nor mpiexec's last word (which comes last). Each file is read from its end,
    ``4 * share`` bytes at most (a character takes up to 4), so the cost is bounded by
    ``limit`` whatever the ranks printed: a 64 MB flood costs what a line does.
    """
    files = files_of(run_dir, "out")
    share = limit // max(len(files), 1)
    parts = []
    for source, path in files.items():
        text = tail(path, 4 * share + 4)
        lines = [f"[{source}] {line.rstrip(chr(13))}" for line in text.split("\n")]
        text = "\n".join(lines[:-1] if lines and lines[-1] == f"[{source}] " else lines)
        if len(text) > share:
            text = "...\n" + text[len(text) - share:].partition("\n")[2]
        if text:
            parts.append(text)
    return "\n".join(parts)
