"""A learner's session in a real browser: ``dlhack lab`` (what ``make lab`` runs), lab 2, Chromium.

JupyterLab starts as ``make lab`` starts it (``dlhack lab``), on a free localhost port with a
token, over a scratch root so the learner's copy is made fresh. Headless Chromium, driven by
Playwright, opens ``mywork/labs/02_collectives.ipynb`` and checks what a newcomer hit:

- the notebook opens on the course's kernel, and nbgrader's instructor tools are not shown;
- a correct first exercise, then its check cell: a line as each run ends, then the score, and
  no stray ``Out[..]`` value under the feedback; then a wrong answer: the check says it failed;
- a ``%%mpiexec`` cell that deadlocks ends at its timeout with each rank's stack and the MPI call
  each rank waits in;
- saving writes the learner's copy, not the repository.

Screenshots go to result/browser/. Chromium comes from the system (``apt-get install chromium``;
``DLHACK_CHROMIUM`` names another binary). Without it the test is skipped, except in CI
(``CI=true``), where it must run.
"""
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.request

import pytest

from tests.support import ROOT

SHOTS = ROOT / "result" / "browser"
LAB = "mywork/labs/02_collectives.ipynb"
TOKEN = "dlhack-browser-test"
IN_CI = os.environ.get("CI") == "true"
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--disable-quic",
                 "--no-first-run", "--disable-background-networking",
                 "--disable-component-update", "--disable-sync"]

CORRECT = '''import numpy as np


def allreduce_naive(comm, x):
    """Sum x over all ranks through rank 0."""
    if comm.rank == 0:
        total = np.array(x, copy=True)
        buf = np.empty_like(x)
        for src in range(1, comm.size):
            comm.Recv(buf, source=src)
            total += buf
        for dst in range(1, comm.size):
            comm.Send(total, dest=dst)
        return total
    comm.Send(np.ascontiguousarray(x), dest=0)
    total = np.empty_like(x)
    comm.Recv(total, source=0)
    return total
'''
WRONG = '''import numpy as np


def allreduce_naive(comm, x):
    """Wrong: never talks to the other ranks."""
    return np.array(x, copy=True)
'''
DEADLOCK = '''%%mpiexec -n 2 --timeout 5
from mpi4py import MPI
comm = MPI.COMM_WORLD
comm.recv(source=1 - comm.rank)  # both ranks receive, nobody sends
'''


def chromium():
    """The Chromium binary to drive, or None."""
    named = os.environ.get("DLHACK_CHROMIUM")
    if named:
        return named
    return next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def settings(folder):
    """JupyterLab user settings for the test: every cell in the page, no news pop-up."""
    for plugin, values in {
            "@jupyterlab/notebook-extension/tracker": {"windowingMode": "none"},
            "@jupyterlab/apputils-extension/notification": {"fetchNews": "false",
                                                            "checkForUpdates": False}}.items():
        path = folder / f"{plugin}.jupyterlab-settings"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(values))


@pytest.fixture(scope="module")
def browser_path():
    path = chromium()
    if path is None:
        if IN_CI:
            pytest.fail("CI=true but no Chromium: .ci/run installs it (apt-get install chromium)")
        pytest.skip("no Chromium on this machine (apt-get install chromium, or set "
                    "DLHACK_CHROMIUM); CI runs this test")
    try:
        import playwright  # noqa: F401
    except ImportError:
        if IN_CI:
            pytest.fail("CI=true but playwright is missing: it is in pyproject's dev extra")
        pytest.skip("playwright not installed (pip install -e '.[dev]')")
    return path


@pytest.fixture(scope="module")
def lab_server(tmp_path_factory):
    """``dlhack lab`` over a scratch root; yields (url, root); stops the server afterwards."""
    base = tmp_path_factory.mktemp("lab")
    root = base / "root"
    root.mkdir()
    settings(base / "settings")
    port = free_port()
    env = dict(os.environ, JUPYTERLAB_SETTINGS_DIR=str(base / "settings"),
               JUPYTERLAB_WORKSPACES_DIR=str(base / "workspaces"),
               JUPYTER_RUNTIME_DIR=str(base / "runtime"))
    with open(base / "jupyter.log", "w") as log:
        server = subprocess.Popen(
            [sys.executable, "-m", "dlhack.cli", "lab", "--root", str(root), "--",
             "--no-browser", "--ServerApp.ip=127.0.0.1", f"--ServerApp.port={port}",
             f"--IdentityProvider.token={TOKEN}", "--ServerApp.port_retries=0"],
            stdout=log, stderr=subprocess.STDOUT, env=env, start_new_session=True)
        try:
            url = f"http://127.0.0.1:{port}"
            wait_for(server, url, base / "jupyter.log")
            yield url, root
        finally:
            stop(server)


def stop(server):
    """SIGTERM to the server's process group (JupyterLab stops its kernels), then SIGKILL."""
    for sig, wait in ((signal.SIGTERM, 30), (signal.SIGKILL, 10)):
        try:
            os.killpg(server.pid, sig)
            server.wait(timeout=wait)
            return
        except ProcessLookupError:
            server.wait()
            return
        except subprocess.TimeoutExpired:
            continue


def wait_for(server, url, log, seconds=150):
    """Until the server answers; fails with its log if it exits or takes too long."""
    deadline = time.monotonic() + seconds
    while True:
        try:
            urllib.request.urlopen(f"{url}/api/status?token={TOKEN}", timeout=5)
            return
        except OSError:
            if server.poll() is not None or time.monotonic() > deadline:
                pytest.fail(f"JupyterLab did not start:\n{log.read_text()}")
            time.sleep(1)


def kernel_ready(page):
    """Wait until the open notebook shows its cells and the course's kernel, started (idle)."""
    from playwright.sync_api import expect

    expect(page.locator(".jp-Notebook .jp-Cell").first).to_be_visible(timeout=90_000)
    expect(page.locator(".jp-Toolbar-kernelName").first).to_have_text(
        "Python (dlhack)", timeout=90_000)
    expect(page.locator(".jp-Notebook-ExecutionIndicator[data-status='idle']").first
           ).to_be_attached(timeout=90_000)


def cell(page, text):
    """The notebook cell whose source contains ``text``."""
    return page.locator(".jp-Notebook .jp-Cell").filter(
        has=page.locator(".jp-InputArea-editor", has_text=text)).first


def write(page, target, source):
    """Replace the source of ``target`` with ``source``, as typing it would."""
    target.locator(".jp-InputArea-editor .cm-content").click()
    page.keyboard.press("Control+A")
    page.keyboard.press("Delete")
    page.keyboard.insert_text(source)  # no auto-indent: the text arrives as written


def run(page, target):
    target.locator(".jp-InputArea-editor .cm-content").click()
    page.keyboard.press("Control+Enter")


def output(target):
    return target.locator(".jp-OutputArea")


@pytest.mark.timeout(420)
def test_a_learner_session_in_chromium(browser_path, lab_server):
    from playwright.sync_api import expect, sync_playwright

    url, root = lab_server
    SHOTS.mkdir(parents=True, exist_ok=True)
    with sync_playwright() as pw:
        browser = pw.chromium.launch_persistent_context(
            root.parent / "chromium", executable_path=browser_path, args=CHROMIUM_ARGS,
            headless=True, viewport={"width": 1400, "height": 1000})  # a fresh profile
        page = browser.new_page()
        page.set_default_timeout(60_000)
        try:
            page.goto(f"{url}/lab/tree/{LAB}?token={TOKEN}")
            kernel_ready(page)
            # nbgrader's instructor tools are hidden: no menu, no Validate button
            expect(page.locator(".lm-MenuBar-itemLabel", has_text="Nbgrader")).to_have_count(0)
            expect(page.get_by_role("button", name="Validate")).to_have_count(0)
            page.screenshot(path=SHOTS / "01_opened.png")

            setup = cell(page, "os.chdir(tempfile.mkdtemp")
            answer = cell(page, "def allreduce_naive(comm, x):")
            check = cell(page, 'dlhack.grade.check("02_collectives", "allreduce_naive")')
            run(page, setup)
            expect(output(setup)).to_contain_text("scripts go to", timeout=60_000)

            write(page, answer, CORRECT)
            run(page, answer)
            run(page, check)
            feedback = output(check)
            expect(feedback).to_contain_text("Checking allreduce_naive", timeout=60_000)
            expect(feedback).to_contain_text("allreduce_naive: 3 / 3", timeout=120_000)
            for line in ("[pass] test_sum_matches_serial at 1 rank (",
                         "[pass] test_sum_matches_serial at 4 ranks (",
                         "[pass] test_any_shape_and_dtype at 3 ranks ("):
                expect(feedback).to_contain_text(line)  # a line as each run ended
            expect(check.locator(".jp-OutputArea-executeResult")).to_have_count(0)
            check.scroll_into_view_if_needed()
            page.screenshot(path=SHOTS / "02_correct_answer.png")

            write(page, answer, WRONG)
            run(page, answer)
            run(page, check)
            expect(feedback).to_contain_text("allreduce_naive: 0 / 3", timeout=120_000)
            expect(feedback).to_contain_text("[FAIL]")
            expect(check.locator(".jp-OutputArea-executeResult")).to_have_count(0)
            check.scroll_into_view_if_needed()
            page.screenshot(path=SHOTS / "03_wrong_answer.png")

            # A deadlocking %%mpiexec cell: two new cells at the end of the notebook.
            last = page.locator(".jp-Notebook .jp-Cell").last
            last.click()
            page.keyboard.press("Escape")
            page.keyboard.press("b")
            page.keyboard.press("Enter")
            page.keyboard.insert_text("%load_ext dlhack")
            page.keyboard.press("Shift+Enter")  # runs it and opens a new cell below
            page.keyboard.insert_text(DEADLOCK)
            page.keyboard.press("Shift+Enter")
            hang = cell(page, "%%mpiexec -n 2 --timeout 5")
            expect(output(hang)).to_contain_text("timed out after 5 s", timeout=90_000)
            expect(output(hang)).to_contain_text("rank 0 is waiting in comm.recv")
            expect(output(hang)).to_contain_text("rank 1 is waiting in comm.recv")
            expect(output(hang)).to_contain_text("most recent call first")
            hang.scroll_into_view_if_needed()
            page.screenshot(path=SHOTS / "04_deadlock_stacks.png")

            # Saving writes the learner's copy (the repository is never the target).
            page.keyboard.press("Escape")
            page.keyboard.press("Control+s")
            saved = root / LAB
            deadline = time.monotonic() + 30
            while "Wrong: never talks" not in saved.read_text() and time.monotonic() < deadline:
                time.sleep(0.5)
            assert "Wrong: never talks" in saved.read_text()
        except Exception:
            page.screenshot(path=SHOTS / "failure.png")
            raise
        finally:
            browser.close()
