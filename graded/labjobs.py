"""Start a learner's whole script under mpiexec from inside a graded test, and record how it ended.

    launch(n, argv, folder, timeout=120)                       # labs 03_convert, 06_slower
    launch(n, argv, folder, timeout=120, keep_threads=False)   # no OMP/OPENBLAS settings at all
    in_background([lambda: job(1), lambda: job(2)])            # start the jobs tests will want

The graded test itself runs at one rank under the grader's mpiexec; the job it starts must not
join that one (``without_launcher``). The job's output goes to ``folder/output.txt`` and how it
ended to ``folder/status.json`` (``rc``, ``timed_out``, the output's tail), which the lab's own
helpers read. On the timeout, mpiexec gets SIGINT (it passes it on to the ranks), then SIGKILL.
"""
import json
import os
import signal
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dlhack.jobs.mpiexec import THREAD_VARIABLES, mpiexec_command, without_launcher


def launch(n, argv, folder, timeout, keep_threads=True):
    """Run ``argv`` on ``n`` ranks in ``folder`` (at most ``timeout`` s); write status.json.

    Args:
        keep_threads: one BLAS thread per rank, as every course job; False leaves the thread
            variables unset, so that the learner's script must set them itself (lab 06_slower).
    """
    folder = Path(folder)
    cmd, env = mpiexec_command(n, argv, env=without_launcher(os.environ))
    if not keep_threads:
        env = {k: v for k, v in env.items() if k not in THREAD_VARIABLES}
    log = folder / "output.txt"
    timed_out = False
    with open(log, "wb") as out:
        proc = subprocess.Popen(cmd, cwd=folder, env=env, stdin=subprocess.DEVNULL, stdout=out,
                                stderr=subprocess.STDOUT, start_new_session=True)
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            timed_out = True
            proc.send_signal(signal.SIGINT)  # mpiexec passes it on to the ranks, then exits
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
    status = {"rc": proc.returncode, "timed_out": timed_out,
              "output": log.read_text(errors="replace")[-6000:]}
    (folder / "status.json").write_text(json.dumps(status))


def in_background(steps, workers=2):
    """Run ``steps`` (functions of no argument) ``workers`` at a time in the background.

    The labs' jobs are cached under a lock (the first caller runs a job, later ones wait for it
    and reuse it), so starting every job a file needs at its first test lets the learner wait
    for the slowest chain of jobs rather than their sum. What a step raises is dropped: the
    test that needs the job asks for it again and gets the same outcome, raised there.
    """
    def quietly(step):
        try:
            step()
        except BaseException:  # noqa: BLE001, S110 - pytest.fail too: the test repeats the call
            pass

    pool = ThreadPoolExecutor(max_workers=workers)
    for step in steps:
        pool.submit(quietly, step)
    pool.shutdown(wait=False)
    return pool
