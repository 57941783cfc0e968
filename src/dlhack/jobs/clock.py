"""A job's clock that stops while the job waits for a core: what the grader's timeouts count.

    clock = JobClock(proc.pid)     # at the launch: mpiexec's (or the sandbox's) pid
    clock.now()                    # seconds the job has had to run since then
    clock.wall()                   # seconds since then, on the wall

A wall-clock timeout punishes a right answer that is merely starved: twenty learners' check
cells on two cores get a tenth of a core each, and a test that needs 2 s takes 20. This clock
counts wall time less the time the job spent *waiting for a CPU*: runnable, but not running,
as Linux accounts it for every process (``/proc/PID/schedstat``, its second field: nanoseconds
spent waiting on a run queue). Each SAMPLE_S it takes the largest wait of any process of the
job over that interval (``ROOT`` and its descendants, found through
``/proc/PID/task/TID/children``: mpiexec, its proxies, the ranks and what they start) and
takes it off the interval: ranks that talk move in lockstep, so the most starved one sets the
pace.

- On a quiet machine it is the wall clock.
- With N ranks sharing fewer cores, or other jobs on them, it runs at the share the job gets.
- A rank that sleeps or blocks is not waiting for a CPU: that time counts in full, so a rank
  stuck in a blocking call times out as before.
- A rank that spins forever (MPICH polls while it waits for a message) advances the clock at
  the rate it gets a core: slowly on a crowded machine. So whoever sets a timeout on this clock
  also caps the wall time, at WALL_CAP times the timeout (grade/watch.py).

Where the kernel keeps no such accounting, or the process is gone, it is the wall clock: never
slower than what it replaced, except where the job waited. Cost: every SAMPLE_S, two small reads
from /proc per process of the job. Linux; standard library only.
"""
import os
import time

SAMPLE_S = 0.25   # s between two looks at the job's processes
WALL_CAP = 10.0   # a timeout on this clock is also a wall-clock timeout this many times longer


def run_queue_wait(pid):
    """Seconds process ``pid`` has waited for a CPU in all its life, or None if unknown."""
    try:
        with open(f"/proc/{pid}/schedstat") as f:
            return int(f.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        return None


def family(root):
    """``root`` and every process below it, from the kernel's lists of children."""
    found, todo = set(), [root]
    while todo:
        pid = todo.pop()
        if pid in found:
            continue
        found.add(pid)
        try:
            threads = os.listdir(f"/proc/{pid}/task")
        except OSError:
            continue  # gone
        for tid in threads:
            try:
                with open(f"/proc/{pid}/task/{tid}/children") as f:
                    todo += [int(kid) for kid in f.read().split()]
            except (OSError, ValueError):
                pass
    return found


class JobClock:
    """Seconds that ``root``'s job has had to run: wall time less its waits for a CPU."""

    def __init__(self, root, sample_s=SAMPLE_S):
        self.root, self.sample_s = root, sample_s
        self.start = self.sampled = time.monotonic()
        self.counted = 0.0  # up to self.sampled
        self.starved = 0.0  # seconds taken off so far
        self.waits = self._waits()  # pid -> its run-queue wait at the last sample

    def wall(self):
        return time.monotonic() - self.start

    def now(self):
        """Counted seconds since the start: exact at each sample, wall time in between."""
        if time.monotonic() - self.sampled >= self.sample_s:
            self._sample()
        return self.counted + (time.monotonic() - self.sampled)

    def _waits(self):
        """``{pid: run-queue wait}`` of every process of the job that the kernel accounts."""
        if self.root is None:
            return {}
        waits = {pid: run_queue_wait(pid) for pid in family(self.root)}
        return {pid: wait for pid, wait in waits.items() if wait is not None}

    def _sample(self):
        t = time.monotonic()
        waits = self._waits()
        # A process seen for the first time was born since the last sample: all its wait is new.
        grown = max((wait - self.waits.get(pid, 0.0) for pid, wait in waits.items()), default=0)
        interval = t - self.sampled
        lost = min(interval, max(0.0, grown))
        self.counted += interval - lost
        self.starved += lost
        self.waits, self.sampled = waits, t
