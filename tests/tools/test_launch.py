"""``dlhack run`` on small broken MPI scripts (tests/tools/scripts/), each at 2 ranks: what its
summary says (the running itself is tests/jobs/test_run.py's).

Every run has a timeout, so a launcher bug fails the test instead of hanging the suite.
"""
import io
import shutil
import subprocess
import sys
import time

import pytest

from dlhack.jobs.run import TIMEOUT_STATUS
from dlhack.tools.launch import main, run
from dlhack.tools.postmortem import where_each_rank_was


def test_every_line_is_marked_with_its_rank(scripts):
    out = io.StringIO()
    result = run([sys.executable, str(scripts / "hello.py")], n=2, timeout=60, stream=out)
    assert result.returncode == 0 and not result.errors and not result.timed_out
    assert result.output[0][0] == "hello from rank 0 of 2"
    assert result.output[1][0] == "hello from rank 1 of 2"
    text = out.getvalue()
    assert "[0] hello from rank 0 of 2\n" in text and "[1] rank 1: the ranks add up to 1\n" in text
    assert text.rstrip().endswith("every rank finished.")


def test_the_same_error_on_every_rank_says_so(scripts):
    """Through the real command line, as a mentor types it."""
    cmd = [sys.executable, "-m", "dlhack.cli", "run", "-n", "2", "--timeout", "60", "--",
           "python", "same_error.py"]
    done = subprocess.run(cmd, cwd=scripts, capture_output=True, text=True, timeout=120,
                          check=False)
    assert done.returncode != 0
    assert ("the same error on 2 of 2 ranks: ZeroDivisionError: float division by zero "
            "(same_error.py:6)") in done.stdout
    assert "reproduce it with --single" in done.stdout


@pytest.fixture(scope="module")
def rank_error(scripts):
    """rank_error.py: rank 1 raises just before an allreduce that rank 0 waits in."""
    out = io.StringIO()
    start = time.monotonic()
    result = run([sys.executable, str(scripts / "rank_error.py")], n=2, timeout=60, stream=out)
    return result, out.getvalue(), time.monotonic() - start


def test_an_error_on_one_rank_names_that_rank_only(rank_error):
    result, text, _ = rank_error
    assert [group.ranks for group in result.errors] == [[1]]
    assert "on rank 1 only (1 of 2): IndexError: list index out of range" in text
    assert "rank- or device-dependent code" in text
    assert "the same error" not in text


def test_an_error_before_a_collective_aborts_instead_of_hanging(rank_error):
    result, text, seconds = rank_error
    # Without MPI_Abort rank 0 waits in the allreduce until the 60 s timeout.
    assert not result.timed_out and result.returncode != 0
    assert seconds < 20
    assert result.aborted == [1]
    assert "called MPI_Abort after the error, which stopped rank 0" in text


def test_a_deadlock_is_dumped_killed_and_leaves_nothing_running(scripts, tmp_path, leftovers):
    script = tmp_path / "deadlock.py"  # a path of its own, to look for leftover processes
    shutil.copy(scripts / "deadlock.py", script)
    out = io.StringIO()
    start = time.monotonic()
    result = run([sys.executable, str(script)], n=2, timeout=3, stream=out)
    seconds = time.monotonic() - start
    assert result.timed_out and result.returncode == TIMEOUT_STATUS
    assert 3 <= seconds < 15
    assert f'File "{script}", line 7 in <module>' in result.stacks[0]
    assert where_each_rank_was(result) == {0: "is waiting in comm.recv (deadlock.py:7)",
                                           1: "is waiting in comm.barrier (deadlock.py:9)"}
    text = out.getvalue()
    assert "timed out after 3 s" in text and "rank 0 is waiting in comm.recv" in text
    assert leftovers(script, wait=1) == []


def test_single_runs_one_process_without_mpiexec(scripts, capsys):
    status = main(["--single", "--timeout", "60", "--", sys.executable, str(scripts / "hello.py")])
    text = capsys.readouterr().out
    assert status == 0
    assert "[0] hello from rank 0 of 1" in text and "[1]" not in text
    assert "one process (--single)" in text


def test_other_commands_run_too_and_no_prefix_drops_the_marks(capsys):
    assert main(["-n", "2", "--no-prefix", "--timeout", "60", "--", "echo", "hi"]) == 0
    assert capsys.readouterr().out.splitlines()[:2] == ["hi", "hi"]
