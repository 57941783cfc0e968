"""Reading tracebacks and faulthandler dumps (dlhack.jobs.stacks), from text alone."""
from dlhack.jobs.stacks import group_errors, last_error, normalise, parse_dump, waiting_call, where

TRACEBACK = """\
some output
Traceback (most recent call last):
  File "/tmp/job.py", line 3, in <module>
    x = 1 / 0
        ~~^~~
ZeroDivisionError: division by zero
"""

CHAINED = """\
Traceback (most recent call last):
  File "/tmp/job.py", line 3, in <module>
KeyError: 'lr'

During handling of the above exception, another exception occurred:

Traceback (most recent call last):
  File "/tmp/job.py", line 5, in <module>
ValueError: no learning rate at 0x7f3a2c
"""


def test_last_error_is_the_final_line_of_the_last_traceback():
    error = last_error(TRACEBACK.splitlines())
    assert error.message == "ZeroDivisionError: division by zero"
    assert error.place == "job.py:3"
    assert last_error(CHAINED.splitlines()).message == "ValueError: no learning rate at 0x..."
    assert last_error(["all fine"]) is None


def test_identical_errors_group_together_and_different_ones_do_not():
    same = last_error(TRACEBACK.splitlines())
    other = last_error(CHAINED.splitlines())
    groups = group_errors({0: same, 1: other, 2: same})
    assert [(g.message, g.ranks) for g in groups] == [
        ("ZeroDivisionError: division by zero", [0, 2]),
        ("ValueError: no learning rate at 0x...", [1]),
    ]
    assert normalise("a  0xDEADbeef   b") == "a 0x... b"


def test_where_names_the_mpi_call_a_rank_waits_in(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("import x\n\nif rank == 0:\n    data = comm.recv(source=1)\n")
    dump = (f'Current thread 0x00007f00 (most recent call first):\n'
            f'  File "{script}", line 4 in <module>\n'
            f'  File "/x/dlhack/jobs/rankwrap.py", line 90 in run_target\n')
    assert where(dump) == "is waiting in comm.recv (job.py:4)"


def test_where_follows_a_library_call_back_to_the_learners_line(tmp_path):
    library = tmp_path / "lib" / "python3.11" / "site-packages" / "comm.py"
    library.parent.mkdir(parents=True)
    library.write_text("def allreduce_grad(self, model):\n    self.mpi_comm.Allreduce(a, b)\n")
    script = tmp_path / "train.py"
    script.write_text("comm.allreduce_grad(model)\n")
    dump = (f'Thread 0x00007f01 (most recent call first):\n'
            f'  File "{library}", line 2 in allreduce_grad\n'
            f'  File "{script}", line 1 in <module>\n')
    assert where(dump) == ("is waiting in self.mpi_comm.Allreduce (comm.py:2), "
                           "called from train.py:1")
    call, frame, caller = waiting_call(parse_dump(dump))
    assert (call, frame.line, caller.file) == ("self.mpi_comm.Allreduce", 2, str(script))


def test_where_says_so_when_no_mpi_call_is_on_the_stack(tmp_path):
    script = tmp_path / "slow.py"
    script.write_text("def step():\n    time.sleep(100)\n")
    dump = f'Current thread 0x1 (most recent call first):\n  File "{script}", line 2 in step\n'
    assert where(dump) == "is not in an MPI call but in step (slow.py:2)"
    assert waiting_call(parse_dump(dump)) is None
    assert where("Current thread 0x1 (most recent call first):\n  <no Python frame>\n") \
        .startswith("is outside Python code")
