"""The files of one job's run folder: one naming scheme for the wrapper that writes them and the
supervisors (``dlhack run``, the grader) that read them.

    RUN_DIR/rank.N.out     everything rank N printed (stdout and stderr; C code and children too)
    RUN_DIR/rank.N.pid     rank N's process id, written once its SIGUSR1 handler is in place
    RUN_DIR/rank.N.stack   rank N's Python stacks, written by faulthandler on each SIGUSR1
    RUN_DIR/rank.N.crash   rank N's Python stacks at a fatal signal (segfault, abort)
    RUN_DIR/rank.N.done    rank N's exit status, once its own code is over
    RUN_DIR/mpiexec.out    what mpiexec itself printed

``rankwrap.py`` writes the ``rank.N.*`` files (read its docstring). It runs by its path without
the dlhack package, so this module uses the standard library only: the wrapper loads this very
file by its path too.
"""
from pathlib import Path

LAUNCHER = "mpiexec"  # the source name of mpiexec's own output


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


def read(run_dir, kind, rank=None):
    """The text of one run file, or "" when it does not exist (yet)."""
    try:
        return run_file(run_dir, kind, rank).read_text(errors="replace")
    except OSError:
        return ""


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
    that failed, nor mpiexec's last word (which comes last).
    """
    sources = {}
    for source, text in OutputFiles(run_dir).read(final=True):
        sources.setdefault(source, []).append(f"[{source}] {text}")
    share = limit // max(len(sources), 1)
    parts = []
    for lines in sources.values():
        text = "\n".join(lines)
        if len(text) > share:
            text = "...\n" + text[len(text) - share:].partition("\n")[2]
        parts.append(text)
    return "\n".join(parts)
