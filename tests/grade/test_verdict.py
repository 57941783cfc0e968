"""One test's run worded for the learner (dlhack.grade.verdict), from run folders written by hand:
the ranks' ends are jobs/endings.py's, the words and the order of the rules are the verdict's."""
from dataclasses import replace

import pytest

from dlhack.grade.batch import Job
from dlhack.grade.notebook import Submission
from dlhack.grade.plan import GradedTest
from dlhack.grade.verdict import Evidence, summarize
from dlhack.jobs.runfiles import run_file

ANSWER = "def allreduce(comm, x):\n    return comm.recv(source=0)\n"
TEST = GradedTest(nodeid="02/test_allreduce.py::test_sum", exercise="allreduce", name="test_sum",
                  ranks=(1, 2), timeout=10.0, points=1.0)
PASSED = {"outcome": "passed", "message": ""}


@pytest.fixture
def launch(tmp_path):
    """``(run_dir, work, verdict)``: ``verdict(records, reason, ...)`` of a run at 2 ranks."""
    run_dir, work = tmp_path / "run", tmp_path / "work"
    run_dir.mkdir()
    work.mkdir()
    (work / "submission.py").write_text(ANSWER)
    job = Job(files=(), submission=Submission(ANSWER, spans=[(1, 2, "answer cell 'ring'")]),
              base=tmp_path, mpiexec="mpiexec", file_mb=1)

    def verdict(records, reason="reported", trusted=False, forged=(), own_files=True):
        return summarize(TEST, replace(job, trusted=trusted),
                         Evidence(2, records, list(forged), [], reason, run_dir, work, own_files))

    return run_dir, work, verdict


def waiting_in_the_answer(work):
    return (f"Current thread 0x1 (most recent call first):\n"
            f'  File "{work / "submission.py"}", line 2 in allreduce\n')


def test_every_rank_passed(launch):
    _, _, verdict = launch
    assert verdict({0: PASSED, 1: PASSED})["outcome"] == "passed"


def test_a_rank_left_waiting_in_the_answers_is_a_hang_that_names_its_line(launch):
    run_dir, work, verdict = launch
    run_file(run_dir, "pid", 1).write_text("1001")
    run_file(run_dir, "stack", 1).write_text(waiting_in_the_answer(work))
    run = verdict({0: PASSED}, reason="stuck")
    assert run["outcome"] == "hung" and run["stuck"] and not run["timed_out"]
    assert run["message"] == (
        "rank 0 finished, but the others did not: rank 1 was still waiting in allreduce (line 2 "
        "of answer cell 'ring'): return comm.recv(source=0)")


def test_ranks_that_never_started_are_mpiexecs_doing(launch):
    run_dir, _, verdict = launch
    run_file(run_dir, "out").write_text("[proxy] cannot launch python\n")
    run = verdict({}, reason="exited")
    assert run["outcome"] == "error"
    assert run["message"] == "mpiexec could not start the ranks: [proxy] cannot launch python"


def test_a_rank_that_started_and_left_nothing_exited(launch):
    run_dir, _, verdict = launch
    run_file(run_dir, "pid", 1).write_text("1001")
    run = verdict({0: PASSED}, reason="exited")
    assert run["outcome"] == "crashed" and run["message"].startswith("rank 1 exited without")


def test_a_full_output_file_fails_only_the_test_it_belongs_to(launch):
    run_dir, _, verdict = launch
    run_file(run_dir, "out", 0).write_bytes(b"x" * (1 << 20))
    assert verdict({0: PASSED, 1: PASSED})["outcome"] == "failed"
    # The launch ran on after this test, so the output may be a later test's.
    assert verdict({0: PASSED, 1: PASSED}, own_files=False)["outcome"] == "passed"


def test_a_forged_record_is_tampering_in_the_sandbox_and_an_error_without_it(launch):
    _, _, verdict = launch
    run = verdict({0: PASSED, 1: PASSED}, forged=[1])
    assert run["outcome"] == "tampered" and "(rank 1)" in run["message"]
    # Without the sandbox, any process of this user may have written it: not the learner's.
    assert verdict({0: PASSED, 1: PASSED}, forged=[1], trusted=True)["outcome"] == "error"
