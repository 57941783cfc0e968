"""A job's clock that stops while the job waits for a core (dlhack.jobs.clock): made to wait for
real, by processes pinned to one CPU (``os.sched_setaffinity``), whatever else the machine runs.
The grader's timeouts on it: tests/grade/test_watch.py."""
import os
import subprocess
import sys
import time

import pytest

from dlhack.jobs.clock import JobClock, family, run_queue_wait

CPU = max(os.sched_getaffinity(0))
# Spins on CPU for ARGV[1] seconds of the wall, with ARGV[2] children doing the same beside it.
SPIN = f"""import os, subprocess, sys, time
os.sched_setaffinity(0, {{{CPU}}})
kids = [subprocess.Popen([sys.executable, __file__, sys.argv[1], "0"])
        for _ in range(int(sys.argv[2]))]
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    pass
for kid in kids:
    kid.wait()
"""

pytestmark = pytest.mark.skipif(run_queue_wait(os.getpid()) is None,
                                reason="this kernel keeps no /proc/PID/schedstat")


@pytest.fixture
def spin(tmp_path):
    """``spin(seconds, children)``: a job of 1 + children processes spinning on one CPU."""
    script = tmp_path / "spin.py"
    script.write_text(SPIN)
    started = []

    def start(seconds, children=0):
        started.append(subprocess.Popen([sys.executable, str(script), str(seconds),
                                         str(children)]))
        return started[-1]

    yield start
    for proc in started:
        for pid in family(proc.pid):  # the children too: they would spin on for their time
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        proc.wait()


def follow(proc):
    """Run a JobClock on ``proc`` until it exits; (wall seconds, counted seconds)."""
    clock = JobClock(proc.pid, sample_s=0.1)
    while proc.poll() is None:
        clock.now()
        time.sleep(0.05)
    return clock.wall(), clock.now()


def test_a_job_of_four_on_one_core_gets_a_quarter_at_most(spin):
    wall, counted = follow(spin(2.0, children=3))
    # Each of the 4 runs at most a quarter of the time; the one that waited most sets the clock.
    assert wall > 1.9 and counted < 0.5 * wall, (wall, counted)


def test_a_job_that_sleeps_is_not_waiting_for_a_core():
    wall, counted = follow(subprocess.Popen(["sleep", "1.5"]))
    assert counted > 0.8 * wall, (wall, counted)


def test_without_a_process_it_is_the_wall_clock():
    clock = JobClock(None)
    time.sleep(0.3)
    assert clock.now() == pytest.approx(clock.wall(), abs=0.02)


def test_the_family_is_every_process_below_the_root(spin):
    proc = spin(30.0, children=2)
    deadline = time.monotonic() + 30
    while len(family(proc.pid)) < 3 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert len(family(proc.pid)) == 3 and proc.pid in family(proc.pid)
