"""Helpers for tests that launch mpiexec themselves: the environment, and killing one rank.

Tests that kill a rank cannot run inside pytest-isolate-mpi's own mpiexec, so they start the
job with ``subprocess`` in a session of its own (everything can be cleaned up if it hangs)
and look at its processes through tests/support.py.
"""
import os
import signal
import subprocess
import time
from pathlib import Path

import psutil

from dlhack.snapshot import find_snapshots
from tests.support import course_env, processes, survivors

ENV = course_env()
KILL_DEADLINE = 30  # seconds from SIGKILL to the end of every process of the job


def rank_processes(job, marker):
    """{rank: psutil.Process} of the ranks (command lines containing ``marker``) under ``job``
    (a Popen)."""
    ranks = {}
    for proc in processes(below=job.pid):
        try:
            if marker in " ".join(proc.cmdline()):
                ranks[int(proc.environ()["PMI_RANK"])] = proc
        except (psutil.Error, KeyError):
            continue
    return ranks


def kill_one_rank(command, out, rank, marker="dlhack.train", env=None, timeout=120):
    """Start ``command``, SIGKILL ``rank`` once ``out`` holds a snapshot, and time the end.

    Returns:
        ``(seconds, returncode, survivors, output)``: seconds from the kill until mpiexec and
        every process it had started were gone (or ``KILL_DEADLINE``), mpiexec's exit status
        (``None`` if it was still running at the deadline), the processes still alive then,
        and the job's output.
    """
    out = Path(out)
    out.parent.mkdir(parents=True, exist_ok=True)
    with open(out.parent / f"{out.name}.log", "w+") as log:
        job = subprocess.Popen(command, env=env or ENV, stdout=log, stderr=subprocess.STDOUT,
                               start_new_session=True)
        try:
            seconds, returncode, survivors = _kill_when_snapshot(job, out, rank, marker, timeout)
        finally:
            if job.poll() is None:  # the job hung: clean up, then let the caller's asserts fail
                os.killpg(job.pid, signal.SIGKILL)
                job.wait()
        log.seek(0)
        return seconds, returncode, survivors, log.read()


def _kill_when_snapshot(job, out, rank, marker, timeout):
    deadline = time.monotonic() + timeout
    while not find_snapshots(out):
        assert job.poll() is None, "the run ended before writing a snapshot"
        assert time.monotonic() < deadline, "no snapshot appeared"
        time.sleep(0.05)
    procs = processes(below=job.pid)  # everything of the job, taken before any of it dies
    victim = rank_processes(job, marker)[rank]
    assert job.poll() is None, "the run ended before the kill: make it longer"
    start = time.monotonic()
    victim.send_signal(signal.SIGKILL)
    try:
        returncode = job.wait(KILL_DEADLINE)
    except subprocess.TimeoutExpired:
        returncode = None
    left = survivors(procs, wait=max(0.0, start + KILL_DEADLINE - time.monotonic()))
    return time.monotonic() - start, returncode, left
