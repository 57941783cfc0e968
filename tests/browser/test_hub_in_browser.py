"""The room on a cluster, in a real browser: the course's JupyterHub on a private Slurm.

The hub is deploy/jupyterhub_config.py, started as the admin README says, over the shared
course environment that deploy/install.sh builds (tests/cluster/hub.py, course_env.py), on a
one-node private Slurm (tests/cluster/slurm.py). Two learners, local Unix users, log in through
headless Chromium with their passwords (PAM). Then, for each:

- their server is a Slurm job of theirs (``squeue``), and their copy of the course, ~/dlhack,
  was pulled by nbgitpuller, without solutions/;
- JupyterLab opens lab 02 in that copy on the course's kernel;
- a correct first exercise, then its check cell: the grader's mpiexec runs the tests at 1 to 4
  ranks inside the learner's job, sealed in bubblewrap (unprivileged user namespaces work in a
  learner's job), and the page shows 3 / 3;
- ranks started with ``!dlhack run`` in the notebook report the learner's own job id.

Then the hub stops: every server's job ends, and no job, hub, proxy or learner's process is
left (the fixtures assert it). Needs root, Slurm, munge, bubblewrap, Chromium and
configurable-http-proxy (``make test`` installs them); skipped otherwise, except in CI.
"""
import contextlib
import os
import re
from pathlib import Path

import pytest
from hubpages import SHOTS, add_cell, log_in, open_lab, room, shots_on_failure
from test_lab_in_browser import CHROMIUM_ARGS, CORRECT, cell, chromium, output, run, write

JOB_CELL = ('!dlhack run -n 2 --timeout 60 -- python -c '
            '"import os; print(\'rank job\', os.environ.get(\'SLURM_JOB_ID\'))"\n'
            'from dlhack.grade import sandbox\n'
            'print("check cells are sealed by:", sandbox.unavailable() or "bubblewrap")')


@pytest.fixture(scope="module", name="room")
def the_room():
    with room(2, prefix=f"dl{os.getpid() % 100000}", group=f"dlg{os.getpid() % 100000}") as it:
        yield it


def start_check(page):
    """Run the set-up cell, a correct first answer and its check cell (not waiting for it)."""
    from playwright.sync_api import expect

    setup = cell(page, "os.chdir(tempfile.mkdtemp")
    run(page, setup)
    expect(output(setup)).to_contain_text("scripts go to", timeout=60_000)
    answer = cell(page, "def allreduce_naive(comm, x):")
    write(page, answer, CORRECT)
    run(page, answer)
    run(page, cell(page, 'dlhack.grade.check("02_collectives", "allreduce_naive")'))


def ranks_job_ids(page):
    """Append a cell that runs two ranks with ``!dlhack run``; the job ids they print."""
    from playwright.sync_api import expect

    ranks = add_cell(page, JOB_CELL)
    expect(ranks).to_contain_text("rank job", timeout=90_000)
    expect(ranks).not_to_contain_text("rank job None")
    # the check cell above ran sandboxed (trusted only where bwrap cannot work): here it can
    expect(ranks).to_contain_text("check cells are sealed by: bubblewrap", timeout=60_000)
    return set(re.findall(r"rank job (\S+)", ranks.inner_text()))


@pytest.mark.timeout(600)
def test_two_learners_on_the_hub(room):
    from playwright.sync_api import expect, sync_playwright

    hub, cluster, learners = room
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS,
                                     headless=True)
        pages = {}
        with contextlib.closing(browser), shots_on_failure(pages, "hub", hub):
            for name, password in learners.accounts:  # both spawn at once
                pages[name] = log_in(browser, hub, name, password)
            for name, page in pages.items():
                open_lab(page, hub, name)
            jobs = {j["user"]: j for j in cluster.squeue()}
            for name in pages:
                assert jobs[name]["name"] == "spawner-jupyterhub", jobs
                assert jobs[name]["state"] == "RUNNING", jobs
                copy = Path(learners.home(name)) / "dlhack"
                assert (copy / "labs" / "02_collectives.ipynb").is_file()
                assert not (copy / "solutions").exists()
            for page in pages.values():
                start_check(page)
            for name, page in pages.items():
                feedback = output(cell(page, 'dlhack.grade.check("02_collectives"'))
                expect(feedback).to_contain_text("allreduce_naive: 3 / 3", timeout=240_000)
                expect(feedback).to_contain_text("[pass] test_sum_matches_serial at 4 ranks (")
                page.screenshot(path=SHOTS / f"hub_{name[-1]}_check.png")
            for name, page in pages.items():
                assert ranks_job_ids(page) == {jobs[name]["id"]}
