"""The words of ``dlhack run``'s summary (dlhack.tools.postmortem), on results made by hand: the
classification is jobs/endings.py's, so each state gets its own words here."""
from dlhack.jobs.endings import Ending
from dlhack.jobs.run import RunResult
from dlhack.jobs.stacks import Error
from dlhack.tools.postmortem import summarise, where_each_rank_was

CRASH = ("Fatal Python error: Aborted\n\nCurrent thread 0x1 (most recent call first):\n"
         '  File "/x/job.py", line 5 in step\n'
         '  File "/x/dlhack/jobs/rankwrap.py", line 141 in main\n')


def result(*endings, **fields):
    return RunResult(returncode=fields.pop("returncode", 1), n=len(endings),
                     endings={e.rank: e for e in endings}, **fields)


def test_each_state_has_its_words_where_a_killed_job_was():
    killed = result(Ending(0, "waiting", where="is waiting in comm.recv (job.py:9)"),
                    Ending(1, "finished", exit_status=0), Ending(2, "raised", exit_status=3),
                    Ending(3, "crashed", dump=CRASH), Ending(4, "gone"), Ending(5, "unstarted"),
                    timed_out=True, timeout=5.0)
    assert where_each_rank_was(killed) == {
        0: "is waiting in comm.recv (job.py:9)", 1: "has finished its code (exit status 0)",
        2: "has finished its code (exit status 3)", 3: "crashed (see above)",
        4: "left no stack (not a Python process, or not started yet)",
        5: "left no stack (not a Python process, or not started yet)"}
    text = summarise(killed)
    assert "timed out after 5 s: the job was killed" in text
    assert "  rank 0 is waiting in comm.recv (job.py:9)" in text
    assert "every recv needs a matching send" in text  # a rank waits in MPI: a deadlock


def test_a_crash_shows_its_dump_without_the_wrapper_and_its_cause():
    text = summarise(result(Ending(0, "crashed", dump=CRASH,
                                   where="Fatal Python error: Aborted in step (job.py:5)")))
    assert '[0]   File "/x/job.py", line 5 in step' in text and "rankwrap" not in text
    assert "rank 0 crashed: Fatal Python error: Aborted in step (job.py:5)" in text
    assert "failed without a Python traceback" not in text


def test_the_same_error_everywhere_and_an_abort_that_stopped_the_others():
    error = Error("IndexError: list index out of range", "job.py:3")
    same = result(Ending(0, "raised", error=error), Ending(1, "raised", error=error))
    assert "the same error on 2 of 2 ranks: IndexError: list index out of range (job.py:3)" \
        in summarise(same)
    one = result(Ending(0, "gone"), Ending(1, "raised", error=error, aborted=True))
    text = summarise(one)
    assert "on rank 1 only (1 of 2): IndexError" in text
    assert "rank 1 called MPI_Abort after the error, which stopped rank 0" in text


def test_a_clean_end_and_one_without_a_traceback():
    assert summarise(result(Ending(0, "finished"), Ending(1, "finished"), returncode=0)) \
        .endswith("every rank finished.")
    assert "failed without a Python traceback" in summarise(result(Ending(0, "gone")))
