"""What the ranks of one launch have reported (dlhack.grade.watch), from records written by hand
as pytest_in_rank.py writes them: which records count, and why a launch is over; and, on a real
process starved of CPU on purpose, that the timeouts count the time it could run: a right but
starved answer passes, a rank that spins or sleeps forever still ends in bounded time."""
import dataclasses
import json
import os
import subprocess
import sys
import time

import pytest

from dlhack.grade import watch as watching
from dlhack.grade.plan import GradedTest
from dlhack.grade.watch import Watch
from dlhack.jobs.clock import family, run_queue_wait

RUN_ID = "r" * 32
TESTS = [GradedTest(nodeid=f"02/test_x.py::test_{k}", exercise="x", name=f"test_{k}",
                    ranks=(2,), timeout=30, points=1) for k in "ab"]


class Running:
    """A stand-in for mpiexec's Popen: running until ``returncode`` is set."""

    returncode = None

    def poll(self):
        return self.returncode


def write(run_dir, rank, i, **fields):
    record = {"rank": rank, "size": 2, "nodeid": TESTS[i].nodeid, "run_id": RUN_ID,
              "outcome": "passed", "message": "", **fields}
    (run_dir / f"result.{rank}.{i}.json").write_text(json.dumps(record))


def test_a_record_counts_only_when_it_names_its_rank_size_test_and_run(tmp_path):
    write(tmp_path, 0, 0)
    write(tmp_path, 1, 0, run_id="s" * 32)  # another run's, or forged
    (tmp_path / "result.0.1.json").write_text('{"rank": 0, "si')  # torn
    watch = Watch(TESTS, 2, tmp_path, RUN_ID)
    announced = []
    watch.read(announced.append)
    assert list(watch.records) == [(0, 0)] and watch.bad == {(1, 0), (0, 1)}
    assert announced == [] and watch.current() == 0 and watch.missing(0) == [1]


def test_a_record_bigger_than_any_the_rank_writes_is_never_read_whole(tmp_path, monkeypatch):
    monkeypatch.setattr(watching, "RECORD_MAX", 1000)
    write(tmp_path, 0, 0, message="x" * 2000)  # a rank may write 64 MB there: not read
    write(tmp_path, 1, 0)
    watch = Watch(TESTS, 2, tmp_path, RUN_ID)
    watch.read()
    assert set(watch.records) == {(1, 0)} and (0, 0) in watch.bad


def test_why_a_launch_is_over(tmp_path, monkeypatch):
    for name in ("EXIT_GRACE", "FAIL_GRACE", "PASS_GRACE"):
        monkeypatch.setattr(watching, name, 0.05)
    proc = Running()
    for rank in (0, 1):
        write(tmp_path, rank, 0)
    write(tmp_path, 0, 1, outcome="failed", message="wrong")
    assert Watch(TESTS, 2, tmp_path, RUN_ID).until_over(proc, None) == "stuck"  # rank 1 in b
    write(tmp_path, 1, 1)
    announced = []
    assert Watch(TESTS, 2, tmp_path, RUN_ID).until_over(proc, announced.append) == "reported"
    assert announced == [0, 1]
    proc.returncode = 0
    assert Watch(TESTS, 2, tmp_path, RUN_ID).until_over(proc, None) == "exited"


def test_a_test_past_its_timeout_and_a_forged_record(tmp_path):
    quick = [dataclasses.replace(t, timeout=0.1) for t in TESTS]
    assert Watch(quick, 2, tmp_path, RUN_ID).until_over(Running(), None) == "timeout"
    write(tmp_path, 0, 0, outcome="passed!")
    assert Watch(TESTS, 2, tmp_path, RUN_ID).until_over(Running(), None) == "forged"


@pytest.mark.parametrize(("exit_code", "outcome"), [(1, "tampered"), (0, "passed")])
def test_records_that_disagree_with_pytest_count_as_tampered(tmp_path, exit_code, outcome):
    """A rank whose records all say passed while its pytest session failed had its records
    changed in the process (the recorder's state, say): the end record gives it away."""
    for i in range(len(TESTS)):
        write(tmp_path, 0, i, size=1)
    watch = Watch(TESTS, 1, tmp_path, RUN_ID)
    watch.read()
    assert all(r["outcome"] == "passed" for r in watch.records.values())
    (tmp_path / "result.0.end.json").write_text(json.dumps(
        {"rank": 0, "size": 1, "run_id": RUN_ID, "exit_code": exit_code}))
    watch.read()
    assert {r["outcome"] for r in watch.records.values()} == {outcome}
    assert not watch.bad


CPU = max(os.sched_getaffinity(0))
# One rank on CPU: it works for MODE seconds of CPU and reports every test, or spins or sleeps.
RANK = f"""import json, os, sys, time
os.sched_setaffinity(0, {{{CPU}}})
run_dir, run_id, mode, nodeids = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4:]
while mode == "spin":
    pass
if mode == "sleep":
    time.sleep(3600)
start = time.process_time()
while time.process_time() - start < float(mode):
    pass
for i, nodeid in enumerate(nodeids):
    record = {{"rank": 0, "size": 1, "nodeid": nodeid, "run_id": run_id, "outcome": "passed"}}
    path = os.path.join(run_dir, f"result.0.{{i}}.json")
    with open(path + ".tmp", "w") as f:  # whole or not at all, as pytest_in_rank.py writes:
        json.dump(record, f)  # a torn record is read as forged
    os.replace(path + ".tmp", path)
"""
HOG = f"import os\nos.sched_setaffinity(0, {{{CPU}}})\nwhile True:\n    pass\n"


@pytest.fixture
def crowded(tmp_path):
    """``launch(mode, timeout)``: a one-rank launch (RANK) on a CPU that 3 other processes keep
    busy, so that it gets a quarter of it at most; returns (why it ended, wall s, the Watch)."""
    if run_queue_wait(os.getpid()) is None:
        pytest.skip("this kernel keeps no /proc/PID/schedstat: the timeouts are the wall's")
    hogs = [subprocess.Popen([sys.executable, "-c", HOG]) for _ in range(3)]
    time.sleep(1.0)  # the hogs spin before the rank starts: it never has the CPU to itself
    started = []

    def launch(mode, timeout):
        tests = [dataclasses.replace(t, timeout=timeout) for t in TESTS]
        for i in range(len(tests)):
            (tmp_path / f"result.0.{i}.json").unlink(missing_ok=True)
        watch = Watch(tests, 1, tmp_path, RUN_ID)
        started.append(subprocess.Popen([sys.executable, "-c", RANK, str(tmp_path), RUN_ID,
                                         mode, *(t.nodeid for t in tests)]))
        reason = watch.until_over(started[-1], None)
        return reason, time.monotonic() - watch.start, watch

    yield launch
    for proc in hogs + started:
        for pid in family(proc.pid):
            try:
                os.kill(pid, 9)
            except ProcessLookupError:
                pass
        proc.wait()


def test_a_right_answer_starved_of_cpu_is_not_a_hang(crowded):
    """It needs 0.6 s of CPU per launch, gets a quarter of a core: over 2.4 s on the wall,
    against 1 s of timeout per test. A wall-clock timeout would call it hung."""
    reason, _, watch = crowded("0.6", timeout=1.0)
    assert reason in ("reported", "exited") and watch.finished(0) and watch.finished(1), reason
    assert watch.duration(0) > 1.0, f"not starved after all: {watch.duration(0)} s"
    assert watch.clock.starved > 1.0


def test_a_starved_rank_that_spins_forever_still_times_out_by_the_wall_cap(crowded, monkeypatch):
    """Its clock runs at the share of the CPU it gets (how much depends on the kernel's
    scheduler); the wall cap, 3 x 0.5 s here, bounds the wait whatever that share."""
    monkeypatch.setattr(watching, "WALL_CAP", 3.0)
    reason, wall, watch = crowded("spin", timeout=0.5)
    assert reason == "timeout" and not watch.finished(0)
    assert 0.5 < wall < 1.5 + 2.0, wall  # after its timeout, and by the cap (+ sampling slack)


def test_a_rank_that_sleeps_forever_times_out_as_on_the_wall(crowded):
    reason, wall, _ = crowded("sleep", timeout=0.5)
    assert reason == "timeout" and 0.5 < wall < 2.0, (reason, wall)
