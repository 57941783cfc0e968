"""The library under ``dlhack run`` (dlhack.jobs.run): lines marked with their rank as they come,
the timeout, and how each rank ended, on small MPI scripts (tests/tools/scripts/).

Every run has a timeout, so a launcher bug fails the test instead of hanging the suite. The
summary ``dlhack run`` prints is tests/tools/test_launch.py's.
"""
import io
import sys

from dlhack.jobs.run import TIMEOUT_STATUS, run


def test_lines_come_marked_with_their_rank_and_no_words_are_added(scripts):
    out = io.StringIO()
    result = run([sys.executable, str(scripts / "hello.py")], n=2, timeout=60, stream=out)
    assert result.returncode == 0 and not result.errors and not result.timed_out
    assert result.output[1] == ["hello from rank 1 of 2", "rank 1: the ranks add up to 1"]
    assert sorted(out.getvalue().splitlines()) == [
        "[0] hello from rank 0 of 2", "[0] rank 0: the ranks add up to 1",
        "[1] hello from rank 1 of 2", "[1] rank 1: the ranks add up to 1"]
    assert {e.state for e in result.endings.values()} == {"finished"}


def test_a_rank_that_finished_early_and_one_left_waiting(scripts):
    result = run([sys.executable, str(scripts / "forgotten_send.py")], n=2, timeout=2,
                 stream=io.StringIO())
    assert result.timed_out and result.returncode == TIMEOUT_STATUS
    waiting, finished = result.endings[0], result.endings[1]
    assert (waiting.state, waiting.call) == ("waiting", "comm.recv")
    assert waiting.where == "is waiting in comm.recv (forgotten_send.py:6)"
    assert (finished.state, finished.exit_status) == ("finished", 0)
    assert "forgotten_send.py" in result.stacks[0] and 1 not in result.stacks


def test_an_error_on_one_rank_is_that_ranks_and_it_aborts_the_job(scripts):
    result = run([sys.executable, str(scripts / "rank_error.py")], n=2, timeout=60,
                 stream=io.StringIO())
    assert not result.timed_out and result.returncode != 0
    assert [(group.message, group.ranks) for group in result.errors] == [
        ("IndexError: list index out of range", [1])]
    assert result.aborted == [1]
    assert result.endings[1].state == "raised" and result.endings[1].exit_status == 1
    assert result.endings[0].state == "gone"  # MPI_Abort took it down: no dump, no exit status


def test_a_crash_is_read_from_its_own_file(tmp_path):
    script = tmp_path / "crash.py"
    script.write_text("import os\n\n\ndef step():\n    os.abort()\n\n\nstep()\n")
    result = run([sys.executable, str(script)], n=1, timeout=60, stream=io.StringIO())
    assert result.returncode != 0 and not result.errors
    crashed = result.endings[0]
    assert crashed.state == "crashed" and "Fatal Python error: Aborted" in result.crashes[0]
    assert crashed.where == "Fatal Python error: Aborted in step (crash.py:5)"
    assert [(f.func, f.line) for f in crashed.frames if f.file == str(script)] == [
        ("step", 5), ("<module>", 8)]
