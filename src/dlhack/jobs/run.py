"""Run a command on N ranks under the supervisor, its lines marked with their rank as they come,
and read how each rank ended: the library under ``dlhack run`` and the ``%%mpiexec`` magic.

    result = run(["python", "script.py"], n=2, timeout=60)   # lines go to sys.stdout, "[1] ..."
    result.returncode, result.errors, result.endings[1].state

The job is started, asked for its stacks and killed by :mod:`dlhack.jobs.supervise`; each rank
runs inside ``rankwrap.py``, which sends its output to a file of its own (followed here, line by
line) and calls ``MPI_Abort`` on an uncaught exception, so one failing rank ends the job instead
of hanging it. On the timeout or Ctrl-C the ranks' Python stacks are dumped first. At the end
everything the job started is killed, and :func:`dlhack.jobs.endings.classify` reads how each
rank ended. The words said about it afterwards are ``dlhack run``'s (dlhack/tools/launch.py).
Cost: one poll of the output files every POLL_S seconds while the job runs.
"""
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field

from dlhack.jobs import supervise
from dlhack.jobs.endings import classify
from dlhack.jobs.mpiexec import find_mpiexec
from dlhack.jobs.runfiles import OutputFiles
from dlhack.jobs.stacks import group_errors

POLL_S = 0.05  # how often the rank files are read: output appears within this delay
TIMEOUT_STATUS = 124  # as coreutils' `timeout`
INTERRUPT_STATUS = 130  # as a shell reports Ctrl-C


@dataclass
class RunResult:
    """What a job did. ``output[rank]`` are its lines; ``endings[rank]`` how it ended."""

    returncode: int
    n: int
    single: bool = False
    timeout: float = None
    output: dict = field(default_factory=dict)  # rank -> lines, without the "[rank]" prefix
    launcher_output: list = field(default_factory=list)  # mpiexec's own lines
    endings: dict = field(default_factory=dict)  # rank -> jobs.endings.Ending
    timed_out: bool = False
    interrupted: bool = False
    stacks: dict = field(default_factory=dict)  # rank -> faulthandler dump, asked for at the end
    seconds: float = 0.0
    summary: str = ""  # what ``dlhack run`` printed after the job (tools/postmortem.py)

    @property
    def errors(self):
        """The ranks' last tracebacks, identical ones grouped (``stacks.ErrorGroup``)."""
        return group_errors({e.rank: e.error for e in self.endings.values() if e.error})

    @property
    def aborted(self):
        """The ranks that called MPI_Abort after an error."""
        return sorted(e.rank for e in self.endings.values() if e.aborted)

    @property
    def crashes(self):
        """``{rank: dump}`` of the ranks that died from a fatal signal."""
        return {e.rank: e.dump for e in self.endings.values() if e.state == "crashed"}


def run(cmd, n, timeout=None, single=False, stream=None, prefix=True, mpiexec="mpiexec",
        threads=None):
    """Run ``cmd`` on ``n`` ranks under mpiexec (or once with ``single``); returns a RunResult.

    Args:
        cmd: the command as a list, e.g. ``["python", "script.py"]``.
        n: the number of ranks (ignored with ``single``).
        timeout: seconds before the stacks are dumped and the job killed; None waits forever.
        single: run ``cmd`` as one plain process, without mpiexec.
        stream: where lines go as they arrive, marked ``[rank]``; default ``sys.stdout`` at call
            time (the notebook's output inside the magic).
        prefix: mark each line with its rank.
        mpiexec: the launcher to use, looked up on PATH.
        threads: BLAS threads per rank; None keeps this process's settings (``dlhack run``
            shows the learner's environment as it is, oversubscription included).

    Ctrl-C (KeyboardInterrupt) dumps the stacks, kills the job and returns a result with
    ``interrupted`` set and returncode 130.
    """
    stream = sys.stdout if stream is None else stream
    n = 1 if single else n
    result = RunResult(returncode=0, n=n, single=single, timeout=timeout,
                       output={rank: [] for rank in range(n)})
    with tempfile.TemporaryDirectory(prefix="dlhack-run-") as run_dir:
        start = time.monotonic()
        job = start_job(cmd, n, single, mpiexec, run_dir, threads)
        files = OutputFiles(run_dir)
        try:
            follow(job.proc, files, result, stream, prefix)
            if result.timed_out or result.interrupted:
                result.stacks = job.stacks()
        finally:
            job.kill()  # always, even after a second Ctrl-C: never leave a rank running
        result.returncode = job.proc.returncode
        killed = result.timed_out or result.interrupted
        if killed:
            result.returncode = TIMEOUT_STATUS if result.timed_out else INTERRUPT_STATUS
        # After our own kill, mpiexec's "BAD TERMINATION" banner would mislead: kept, not shown.
        show(files.read(final=True), result, stream, prefix, quiet_launcher=killed)
        result.seconds = time.monotonic() - start
        result.endings = classify(run_dir, n, output=result.output)  # before the folder goes
    return result


def start_job(cmd, n, single, mpiexec, run_dir, threads=None):
    """Start ``cmd`` on ``n`` ranks (or alone with ``single``); returns a supervise.Job."""
    if single:
        return supervise.start(cmd, run_dir, threads=threads)
    path = find_mpiexec() if mpiexec == "mpiexec" else shutil.which(mpiexec)
    if path is None:
        raise FileNotFoundError(f"no {mpiexec} on PATH: activate the course environment "
                                "(. .venv/bin/activate), or run `dlhack doctor`")
    return supervise.start(cmd, run_dir, n, mpiexec=path, threads=threads)


def follow(proc, files, result, stream, prefix):
    """Show the ranks' lines until the job ends, the timeout passes or Ctrl-C is pressed."""
    start = time.monotonic()
    try:
        while proc.poll() is None:
            show(files.read(), result, stream, prefix)
            if result.timeout is not None and time.monotonic() - start > result.timeout:
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
