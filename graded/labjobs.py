"""Start a learner's whole script under mpiexec from inside a graded test, and record how it ended.

    launch(n, argv, folder, timeout=120)                       # labs 03_convert, 06_slower
    launch(n, argv, folder, timeout=120, keep_threads=False)   # no OMP/OPENBLAS settings at all
    in_background([lambda: job(1), lambda: job(2)])            # start the jobs tests will want

The graded test itself runs at one rank under the grader's mpiexec; the job it starts must not
join that one. The job is started and killed by dlhack's one job supervisor
(``dlhack.jobs.supervise``, which drops the outer launcher's variables): each rank runs inside
its wrapper, which ends the job when a rank raises, and on the timeout, or after a normal end,
everything the job started is killed. How it ended goes to ``folder/status.json`` (``rc``,
``timed_out``, the end of each rank's output), which the lab's own helpers read; the run files
stay in ``folder/run``.
"""
import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dlhack.jobs import supervise
from dlhack.jobs.mpiexec import THREAD_VARIABLES
from dlhack.jobs.runfiles import output_tail


def launch(n, argv, folder, timeout, keep_threads=True):
    """Run ``argv`` on ``n`` ranks in ``folder`` (at most ``timeout`` s); write status.json.

    Args:
        keep_threads: one BLAS thread per rank, as every course job; False leaves the thread
            variables unset, so that the learner's script must set them itself (lab 06_slower).
    """
    folder = Path(folder)
    env = {k: v for k, v in os.environ.items() if keep_threads or k not in THREAD_VARIABLES}
    run_dir = folder / "run"
    run_dir.mkdir(exist_ok=True)
    job = supervise.start(argv, run_dir, n, cwd=folder, env=env,
                          threads=1 if keep_threads else None)
    timed_out = False
    try:
        job.proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
    finally:
        job.kill()
    status = {"rc": job.proc.returncode, "timed_out": timed_out,
              "output": output_tail(run_dir, limit=6000)}
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
