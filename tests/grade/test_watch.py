"""What the ranks of one launch have reported (dlhack.grade.watch), from records written by hand
as pytest_in_rank.py writes them: which records count, and why a launch is over."""
import dataclasses
import json

import pytest

from dlhack.grade import watch as watching
from dlhack.grade.plan import GradedTest
from dlhack.grade.watch import Watch

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
