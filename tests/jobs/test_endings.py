"""How each rank ended (dlhack.jobs.endings), read from run folders written by hand: one file set
per state, in the order the states are tried."""
import pytest

from dlhack.jobs.endings import classify, ranks_text
from dlhack.jobs.runfiles import run_file

TRACEBACK = ["Traceback (most recent call last):", '  File "/tmp/job.py", line 3, in <module>',
             "ZeroDivisionError: division by zero",
             "dlhack: rank 0 raised ZeroDivisionError; calling MPI_Abort in 1 s so that ..."]


@pytest.fixture
def job(tmp_path):
    """A script whose lines the stack dumps point at, and ``write(rank, kind, text)``."""
    script = tmp_path / "job.py"
    script.write_text("x = 1\ncomm.recv(source=1)\ntime.sleep(100)\n")

    def write(rank, kind, text):
        run_file(tmp_path, kind, rank).write_text(text)

    return tmp_path, script, write


def dump(script, line):
    return (f"Current thread 0x00007f00 (most recent call first):\n"
            f'  File "{script}", line {line} in <module>\n')


def test_every_state_from_its_files(job):
    run_dir, script, write = job
    for rank in range(7):
        if rank != 6:  # rank 6 never got as far as its pid file
            write(rank, "pid", str(1000 + rank))
        write(rank, "stack", "")  # rankwrap makes it empty, faulthandler fills it on SIGUSR1
    write(0, "done", "0")
    write(1, "done", "1")
    write(2, "crash", "Fatal Python error: Segmentation fault\n\n" + dump(script, 1))
    write(3, "stack", dump(script, 2))
    write(4, "stack", dump(script, 3))
    endings = classify(run_dir, 7, records={5: {"outcome": "passed"}})
    assert {rank: e.state for rank, e in endings.items()} == {
        0: "finished", 1: "raised", 2: "crashed", 3: "waiting", 4: "busy", 5: "reported",
        6: "unstarted"}
    assert (endings[0].exit_status, endings[1].exit_status) == (0, 1)
    assert endings[2].where == "Fatal Python error: Segmentation fault in <module> (job.py:1)"
    assert [(f.file, f.line) for f in endings[2].frames] == [(str(script), 1)]
    assert (endings[3].call, endings[3].where) == ("comm.recv",
                                                   "is waiting in comm.recv (job.py:2)")
    assert endings[4].where == "is not in an MPI call but in <module> (job.py:3)"
    assert endings[5].record == {"outcome": "passed"}


def test_a_rank_that_left_only_its_pid_is_gone(job):
    run_dir, _, write = job
    write(0, "pid", "1000")
    assert classify(run_dir, 1)[0].state == "gone"


def test_a_crash_outranks_the_exit_status(job):
    run_dir, script, write = job
    write(0, "pid", "1000")
    write(0, "done", "0")
    write(0, "crash", "Fatal Python error: Aborted\n\n" + dump(script, 1))  # in MPI_Finalize
    assert classify(run_dir, 1)[0].state == "crashed"


def test_the_output_gives_the_error_and_the_abort(job):
    run_dir, _, write = job
    write(0, "done", "1")
    endings = classify(run_dir, 2, output={0: ["some output", *TRACEBACK], 1: ["fine"]})
    assert endings[0].error.message == "ZeroDivisionError: division by zero"
    assert endings[0].aborted and not endings[1].aborted and endings[1].error is None


def test_an_output_file_at_the_limit_is_flooded(job):
    run_dir, _, write = job
    write(0, "out", "x" * 100)
    write(1, "out", "x" * 99)
    write(2, "crash", "OSError: [Errno 27] File too large\n")
    endings = classify(run_dir, 3, file_limit=100)
    assert [e.flooded for e in endings.values()] == [True, False, True]
    assert not any(e.flooded for e in classify(run_dir, 3).values())  # no limit, no flood


def test_ranks_are_named_in_order():
    assert ranks_text([2]) == "rank 2"
    assert ranks_text([3, 0, 1]) == "ranks 0, 1, 3"
