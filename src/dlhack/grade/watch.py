"""What the ranks of one launch have reported so far, and when to stop waiting for them.

    watch = Watch(tests, ranks, run_dir, run_id)
    reason = watch.until_over(proc, announce)   # "reported", "exited", "stuck", "timeout", ...
    watch.records[(rank, i)]                    # rank's record of test i, once it checked out

pytest_in_rank.py writes ``result.RANK.I.json`` as each test I ends on a rank, and
``result.RANK.end.json`` with pytest's exit status when its session is over. A record counts
only when it names its rank, the rank count, its test and the run id the grader chose
(``batch.py``); one that does not is kept aside in ``bad``, which the verdict reads as tampering
in the sandbox.
"""
import json
import time
from pathlib import Path

from dlhack.jobs.clock import WALL_CAP, JobClock

POLL_S = 0.02      # s: how often the result records are looked for
FAIL_GRACE = 2.0   # s: after one rank fails a test, how long the others get in it
PASS_GRACE = 5.0   # s: after one passes it; generous: a false "stuck" fails a right answer
EXIT_GRACE = 1.0   # s: after every rank reported, how long mpiexec gets to exit
OUTCOMES = ("passed", "failed", "skipped", "error", "tampered")
RECORD_MAX = 256 << 10  # bytes: a record holds at most a few KB of message, output and frames


class Watch:
    """What the ranks of one launch have reported so far, and when to stop waiting for them.

    Each test has its own clock, started when the test before it finished on every rank (the
    first: at the launch). The launch is over when mpiexec exited; when a record does not
    check out; when every test finished on every rank (and mpiexec had EXIT_GRACE seconds to
    exit); when the current test (the first unfinished one) finished on some ranks and the
    others are still running FAIL_GRACE (one failed) or PASS_GRACE seconds later: they are
    stuck; or at the current test's timeout.

    These seconds are the launch's ``jobs.clock.JobClock``: time it could run, without the time
    its processes waited for a core, so that a right answer starved by a crowded machine is not
    taken for a hang. A test is also over at WALL_CAP times its timeout on the wall, so that a
    rank that spins forever on a crowded machine ends in bounded time.
    """

    def __init__(self, tests, ranks, run_dir, run_id):
        self.tests, self.ranks, self.run_dir, self.run_id = tests, ranks, Path(run_dir), run_id
        self.records, self.bad = {}, set()  # (rank, test index) -> record; unverifiable ones
        self.start = time.monotonic()
        self.done_at = {}  # test index -> when the last rank reported it
        self.clock = JobClock(None)  # until_over's, once the launch runs
        self.counted_at = {}  # test index -> the clock when the last rank reported it
        self.ended = set()  # ranks whose end record was read

    def finished(self, i):
        return all((rank, i) in self.records for rank in range(self.ranks))

    def missing(self, i):
        return [rank for rank in range(self.ranks) if (rank, i) not in self.records]

    def current(self):
        return next((i for i in range(len(self.tests)) if not self.finished(i)), None)

    def duration(self, i):
        begun = self.done_at.get(i - 1, self.start)
        return round(self.done_at.get(i, time.monotonic()) - begun, 2)

    def until_over(self, proc, announce):
        """Poll until the launch is over; returns why it was stopped."""
        first_seen, all_reported = {}, None  # test index -> when a rank first reported it
        self.clock = JobClock(getattr(proc, "pid", None))  # a stand-in without a pid: the wall
        while True:
            exited = proc.poll() is not None
            self.read(announce)
            now = self.clock.now()
            if exited:
                return "exited"
            if self.bad:
                return "forged"
            current = self.current()
            if current is None:
                all_reported = all_reported or now
                if now - all_reported > EXIT_GRACE:
                    return "reported"
            else:
                reported = [self.records[(rank, current)] for rank in range(self.ranks)
                            if (rank, current) in self.records]
                if reported:
                    since = first_seen.setdefault(current, now)
                    failed = any(r["outcome"] != "passed" for r in reported)
                    if now - since > (FAIL_GRACE if failed else PASS_GRACE):
                        return "stuck"
                timeout = self.tests[current].timeout
                wall = time.monotonic() - self.done_at.get(current - 1, self.start)
                if (now - self.counted_at.get(current - 1, 0.0) > timeout
                        or wall > WALL_CAP * timeout):
                    return "timeout"
            time.sleep(POLL_S)

    def read(self, announce=None):
        """Add every new record that names its rank, the size, its test and this run; note
        those that do not; check each rank's end record against its records."""
        for i, test in enumerate(self.tests):
            expect = {"size": self.ranks, "nodeid": test.nodeid, "run_id": self.run_id}
            fresh = _read_records(self.run_dir, i, expect, self.records, self.bad, self.ranks)
            if fresh and self.finished(i) and i not in self.done_at:
                self.done_at[i], self.counted_at[i] = time.monotonic(), self.clock.now()
                if announce is not None:
                    announce(i)
        for rank in range(self.ranks):
            self._check_end(rank)

    def _check_end(self, rank):
        """A rank whose records all say passed while pytest's exit status says otherwise had
        its records changed in the process: every one of them counts as tampered."""
        path = self.run_dir / f"result.{rank}.end.json"
        if rank in self.ended or not path.exists():
            return
        self.ended.add(rank)
        try:
            end = json.loads(_small(path))
            code = int(end["exit_code"])
            good = end.get("rank") == rank and end.get("run_id") == self.run_id
        except (OSError, ValueError, TypeError, KeyError):
            good, code = False, None
        if not good:
            self.bad.add((rank, "end"))
            return
        mine = [key for key in self.records if key[0] == rank]
        if code != 0 and mine and len(mine) == len(self.tests) and all(
                self.records[key]["outcome"] == "passed" for key in mine):
            for key in mine:
                self.records[key] = {**self.records[key], "outcome": "tampered",
                                     "message": f"your code changed the grader's record of the "
                                                f"test (it said passed, pytest's exit status "
                                                f"was {code})"}



def _small(path):
    """The text of a record file; ValueError when it is bigger than any the rank writes (a
    rank can write up to the file limit there: the grader never reads that much)."""
    limit = RECORD_MAX
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{path.name} is over {limit} bytes")
    return data.decode()


def _read_records(run_dir, i, expect, records, bad, ranks):
    """Add every new record of test ``i`` that names its rank, the size, the test and the run;
    note those that do not in ``bad`` as ``(rank, i)``. Returns how many were added."""
    added = 0
    for rank in range(ranks):
        path = run_dir / f"result.{rank}.{i}.json"
        if (rank, i) in records or (rank, i) in bad or not path.exists():
            continue
        try:
            record = json.loads(_small(path))
            good = (isinstance(record, dict) and record.get("rank") == rank
                    and all(record.get(k) == v for k, v in expect.items())
                    and record.get("outcome") in OUTCOMES
                    and isinstance(record.get("message", ""), str))
        except (OSError, ValueError, TypeError):
            good = False  # written with os.replace (pytest_in_rank.py): a torn file is someone else's
        if good:
            records[(rank, i)] = record
            added += 1
        else:
            bad.add((rank, i))
    return added
