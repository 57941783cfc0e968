"""``dlhack run`` and the grader share one job runtime (dlhack/jobs/): the same stack reader
names where a deadlocked rank waits, and the same supervisor's sweep kills a double-forked
child."""
import io
import sys
import uuid

from dlhack.grade import grade, grade_notebook, notebook
from dlhack.grade.plan import load_plan
from dlhack.grade.report import feedback
from dlhack.jobs import stacks
from dlhack.jobs.run import run
from tests.grade.gradetools import PLANTED, SOLUTION
from tests.support import SCRIPTS

DEADLOCK = SCRIPTS / "deadlock.py"
LEAVE_A_CHILD = """
import subprocess
# Out of the rank's session, group and folders, and its parent gone: only the job's mark is left.
subprocess.run(['sh', '-c', 'cd / && sleep {tag} &'], start_new_session=True, check=True)
"""


def test_both_read_a_deadlock_through_the_same_stack_parser(workdir, monkeypatch):
    dumps = []
    parse_dump = stacks.parse_dump
    monkeypatch.setattr(stacks, "parse_dump", lambda text: dumps.append(text) or parse_dump(text))

    result = run([sys.executable, str(DEADLOCK)], n=2, timeout=3, stream=io.StringIO())
    assert {rank: e.where for rank, e in result.endings.items()} == {
        0: "is waiting in comm.recv (deadlock.py:7)", 1: "is waiting in comm.barrier (deadlock.py:9)"}
    assert any(str(DEADLOCK) in dump for dump in dumps)

    dumps.clear()
    graded = grade_notebook(PLANTED / "deadlock.ipynb", lab="02_collectives",
                            exercises=["allreduce_naive"], timeout=8, workdir=workdir)
    flat = " ".join(feedback(graded).split())
    assert "rank 0 was still waiting in allreduce_naive" in flat
    assert "comm.Recv(buf, source=src)" in flat  # the MPI call, on the learner's line
    assert any("submission.py" in dump for dump in dumps), "the grader read its dumps elsewhere"


def unique_tag():
    """A sleep length no one else uses, to find the child again."""
    return f"{300 + uuid.uuid4().int % 10**6 / 10**7:.7f}"


def test_dlhack_run_sweeps_a_double_forked_child(tmp_path, leftovers):
    tag = unique_tag()
    script = tmp_path / "leaver.py"
    script.write_text(LEAVE_A_CHILD.format(tag=tag))
    result = run([sys.executable, str(script)], n=2, timeout=60, stream=io.StringIO())
    assert result.returncode == 0
    assert leftovers(f"sleep {tag}", wait=3) == [], "dlhack run left the double-forked child"


def test_the_grader_sweeps_a_double_forked_child(workdir, leftovers):
    tag = unique_tag()
    sub, _ = notebook.from_notebook(SOLUTION)
    text = sub.text + LEAVE_A_CHILD.format(tag=tag)
    graded = grade(load_plan("02_collectives"), notebook.Submission(text=text, spans=sub.spans),
                   exercises=["allreduce_naive"], workdir=workdir)
    assert graded["score"] == 3, feedback(graded)
    assert leftovers(f"sleep {tag}", wait=3) == [], "the grader left the double-forked child"
