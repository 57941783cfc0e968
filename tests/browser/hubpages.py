"""The course's hub in Chromium, for the browser tests on a private Slurm: the room, logging in,
opening lab 02 in a learner's ~/dlhack, and adding a cell to run.

    with room(3, "dj1", "djg1") as (hub, cluster, learners):  # Slurm, 3 learners, the hub
        page = log_in(browser, hub, name, password)   # their server then spawns as a Slurm job
        open_lab(page, hub, name)                     # lab 02 on the course's kernel, idle
        out = add_cell(page, "!dlhack submit 02_collectives")  # run at the end; its output

Used by test_hub_in_browser.py and test_handin_in_browser.py. :func:`why_not` says why the room
cannot be tested here (skipped then, except in CI: ``require`` fails there).
"""
import contextlib
import re
import shutil
import sys

from tests.support import ROOT

sys.path.insert(0, str(ROOT / "tests" / "cluster"))  # the cluster scenarios' support modules

SHOTS = ROOT / "result" / "browser"
LAB = "dlhack/labs/02_collectives.ipynb"


def why_not():
    """Why the room cannot be tested here, or None."""
    from slurm import unavailable
    from test_lab_in_browser import chromium

    reason = unavailable()
    if reason is None and shutil.which("configurable-http-proxy") is None:
        reason = "configurable-http-proxy is missing (npm install -g configurable-http-proxy)"
    if reason is None and shutil.which("sudo") is None:
        reason = "sudo is missing: batchspawner submits each learner's job with it"
    if reason is None and chromium() is None:
        reason = "no Chromium (apt-get install chromium)"
    if reason is None:
        try:
            import playwright  # noqa: F401
        except ImportError:
            reason = "playwright is not installed (pip install -e '.[dev]')"
    return reason


@contextlib.contextmanager
def room(n, prefix, group):
    """One-node Slurm, ``n`` learners (``prefix`` + a letter, in ``group``), the course's hub."""
    from course_env import build
    from hub import Hub
    from learners import Learners
    from slurm import Slurm, require

    require(why_not())
    site = build()
    with Slurm(nodes=1, cpus=8) as cluster, Learners(n, prefix=prefix, group=group) as learners, \
            Hub(site, cluster, group, cpus=2) as hub:
        yield hub, cluster, learners


def log_in(browser, hub, name, password):
    """A fresh browser context; logs in and returns its page (the server is then spawning)."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.set_default_timeout(60_000)
    page.goto(f"{hub.url}/hub/login")
    page.fill("#username_input", name)
    page.fill("#password_input", password)
    page.click("#login_submit")
    return page


def open_lab(page, hub, name):
    from test_lab_in_browser import kernel_ready

    page.wait_for_url(re.compile(rf".*/user/{name}/lab.*"), timeout=180_000)
    page.goto(f"{hub.url}/user/{name}/lab/tree/{LAB}")
    kernel_ready(page)


@contextlib.contextmanager
def shots_on_failure(pages, prefix, hub):
    """On an exception, a screenshot of each learner's page (``result/browser/PREFIX_X_failure``),
    and beside them, in ``PREFIX_failure.txt`` and on stdout, where each page was and the end of
    the hub's log: a screenshot of an error page does not say which server served it."""
    try:
        yield
    except Exception:
        where = [f"{name}: {page.url}" for name, page in pages.items()]
        for name, page in pages.items():
            page.screenshot(path=SHOTS / f"{prefix}_{name[-1]}_failure.png")
        report = "\n".join(["each learner's page:", *where, "the hub's log:", hub.log(120)])
        (SHOTS / f"{prefix}_failure.txt").write_text(report)
        print(report)
        raise


def add_cell(page, source):
    """Append a code cell ``source`` to the open notebook and run it; its output area."""
    from test_lab_in_browser import cell, output

    page.locator(".jp-Notebook .jp-Cell").last.click()
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.keyboard.press("Enter")
    page.keyboard.insert_text(source)
    page.keyboard.press("Shift+Enter")
    return output(cell(page, source.splitlines()[0]))
