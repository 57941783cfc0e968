"""The one supervisor (dlhack.jobs.supervise), directly: stacks, pids and the kill sweep.

The same module runs ``dlhack run``'s jobs and the grader's; tests/grade/test_one_supervisor.py
checks both users side by side.
"""
import io
import shutil
import subprocess
import sys
import time
import uuid

import pytest

from dlhack.jobs import supervise
from dlhack.jobs.run import run
from dlhack.jobs.runfiles import run_file
from dlhack.jobs.stacks import where


def wait_for(predicate, seconds=30):
    end = time.monotonic() + seconds
    while not predicate():
        assert time.monotonic() < end, "timed out waiting"
        time.sleep(0.05)


@pytest.fixture
def bystander():
    """An unrelated process of ours: what a rank's pid may belong to once the rank has ended."""
    proc = subprocess.Popen(["sleep", "60"])
    yield proc
    proc.kill()
    proc.wait()


def test_a_deadlocked_job_names_the_call_each_rank_waits_in(scripts, tmp_path, leftovers):
    job = supervise.start([sys.executable, str(scripts / "deadlock.py")], tmp_path, n=2)
    try:
        wait_for(lambda: len(job.pids()) == 2)
        wait_for(lambda: all("starts" in run_file(tmp_path, "out", r).read_text() for r in (0, 1)))
        time.sleep(0.3)  # from the print to the blocking call
        dumps = job.stacks()
    finally:
        job.kill()
    assert {rank: where(dump) for rank, dump in dumps.items()} == {
        0: "is waiting in comm.recv (deadlock.py:7)", 1: "is waiting in comm.barrier (deadlock.py:9)"}
    assert leftovers(tmp_path, wait=1) == []


def test_a_pid_file_is_believed_only_for_a_process_of_the_job(scripts, tmp_path, bystander):
    job = supervise.start([sys.executable, str(scripts / "deadlock.py")], tmp_path, n=2)
    try:
        wait_for(lambda: len(job.pids()) == 2)
        run_file(tmp_path, "pid", 7).write_text(str(bystander.pid))  # no rank 7 in this job
        pids = job.pids()
        assert sorted(pids) == [0, 1] and bystander.pid not in pids.values()
    finally:
        job.kill()
    assert bystander.poll() is None, "the kill sweep hit a process that is not the job's"


def test_pid_files_of_a_finished_job_are_not_signalled(tmp_path, bystander):
    job = supervise.start([sys.executable, "-c", "print('done')"], tmp_path)
    job.proc.wait()
    # As if the rank's pid had been handed to another process since, and its code never ended.
    run_file(tmp_path, "pid", 0).write_text(str(bystander.pid))
    run_file(tmp_path, "done", 0).unlink()
    assert job.pids() == {}
    assert job.stacks(wait_s=0.5) == {}
    job.kill()
    time.sleep(0.2)
    assert bystander.poll() is None, "a recycled pid was signalled"
    assert run_file(tmp_path, "out", 0).read_text() == "done\n"


def test_a_rank_that_is_not_python_is_not_asked_for_a_stack(tmp_path):
    job = supervise.start(["sleep", "30"], tmp_path)  # runs as rankwrap.py --exec sleep 30
    try:
        wait_for(lambda: len(job.pids()) == 1)
        assert job.stacks(wait_s=0.5) == {}
        assert job.proc.poll() is None, "SIGUSR1 killed a process without a handler for it"
    finally:
        job.kill()
    assert job.proc.returncode is not None


def test_a_double_forked_child_is_swept_after_a_normal_end(tmp_path, leftovers):
    """It left the rank's session and folder: only the job's mark in its environment is left."""
    tag = f"{300 + uuid.uuid4().int % 10**6 / 10**7:.7f}"  # a sleep length no one else uses
    script = tmp_path / "leaver.py"
    script.write_text("import subprocess\n"
                      f"subprocess.run(['sh', '-c', 'cd / && sleep {tag} &'], "
                      "start_new_session=True, check=True)\n"
                      "print('left a child behind')\n")
    result = run([sys.executable, str(script)], n=2, timeout=60, stream=io.StringIO())
    assert result.returncode == 0 and result.output[1] == ["left a child behind"]
    assert leftovers(f"sleep {tag}", wait=3) == []


@pytest.mark.skipif(not shutil.which("bwrap"), reason="needs bubblewrap (apt-get install bubblewrap)")
def test_a_job_in_a_pid_namespace_is_signalled_by_its_pids_here(scripts, tmp_path, leftovers):
    """With ``prefix`` (the grader's sandbox), a rank's pid file holds its pid in the namespace;
    the supervisor maps it to this machine's pid, dumps the stacks there, and the kill ends it."""
    prefix = ["bwrap", "--unshare-user", "--unshare-pid", "--die-with-parent", "--dev-bind", "/",
              "/", "--proc", "/proc", "--"]
    job = supervise.start([sys.executable, str(scripts / "deadlock.py")], tmp_path, n=2,
                          prefix=prefix)
    try:
        wait_for(lambda: len(job.pids()) == 2)
        written = {int(run_file(tmp_path, "pid", r).read_text()) for r in (0, 1)}
        assert not written & set(job.pids().values()), "the pids here are not the namespace's"
        wait_for(lambda: all("starts" in run_file(tmp_path, "out", r).read_text() for r in (0, 1)))
        time.sleep(0.3)
        dumps = job.stacks()
    finally:
        job.kill()
    assert where(dumps[0]) == "is waiting in comm.recv (deadlock.py:7)"
    assert leftovers(tmp_path, wait=5) == []


def test_wrap_keeps_interpreter_options_before_the_wrapper():
    assert supervise.wrap(["python3", "-u", "-X", "dev", "job.py", "-n", "3"], "/r") == [
        "python3", "-u", "-X", "dev", str(supervise.WRAPPER), "/r", "job.py", "-n", "3"]
    assert supervise.wrap(["python", "-m", "dlhack.cli", "train"], "/r")[2:] == [
        "/r", "-m", "dlhack.cli", "train"]
    assert supervise.wrap(["hostname"], "/r") == [
        sys.executable, str(supervise.WRAPPER), "/r", "--exec", "hostname"]
