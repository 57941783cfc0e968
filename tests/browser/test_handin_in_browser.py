"""From a learner's JupyterLab to the gradebook and back, in a real browser, on the course's hub.

The hub, Slurm and learners are test_hub_in_browser.py's (hubpages.py); the exchange is
nbgrader's (tests/cluster/exchange.py), released by the instructor (root) as deploy/README.md
says. Three learners log in through headless Chromium; each opens lab 02 in ~/dlhack, answers
its first exercise (right, wrong, or a loop that never ends), saves, and hands the lab in from
a cell, ``!dlhack submit 02_collectives``: the page shows that it arrived, and when.

The hand-in is a cell, not nbgrader's Assignments tab: that tab fetches and submits
``02_collectives/02_collectives.ipynb`` beside the server's root, outside ~/dlhack, where
JupyterLab refuses to save (deploy/README.md).

The instructor collects (``nbgrader collect``), grades the first exercise in the sandbox
(``dlhack grade``; the loop ends at the test's short timeout), writes the CSV (one row per
student id, numeric scores) and the feedback, and releases it (``nbgrader release_feedback``).
Each learner fetches it from a cell and opens the page in their JupyterLab: their own score, the
failing test's message and the ranks it failed at; reading a classmate's page or hand-in from a
cell is refused. Screenshots go to result/browser/.
"""
import contextlib
import csv
import os
import re
import time
import urllib.parse
from pathlib import Path

import pytest
from hubpages import SHOTS, add_cell, log_in, open_lab, room, shots_on_failure
from test_lab_in_browser import CHROMIUM_ARGS, CORRECT, WRONG, cell, chromium, write

from dlhack.grade.cli import main as grade
from tests.grade.gradetools import SOLUTION

LAB = "02_collectives"
HANGS = '''def allreduce_naive(comm, x):
    """Waits for a message that never comes: loops forever."""
    while True:
        pass
'''
ANSWERS = {"right": CORRECT, "wrong": WRONG, "hangs": HANGS}
SCORES = {"right": "3", "wrong": "0", "hangs": "0"}  # allreduce_naive is worth 3
MARKS = {"right": "comm.Recv(total, source=0)", "wrong": "Wrong: never talks",
         "hangs": "while True:"}  # a line that only this answer has
STAMP = re.compile(r"handed in \S+ \(at \d{4}-\d\d-\d\d \d\d:\d\d:\d\d\.?\d* UTC\)")


@pytest.fixture(scope="module")
def trio():
    from exchange import Exchange  # tests/cluster: on the path once hubpages is imported

    tag = os.getpid() % 100000
    with room(3, prefix=f"dj{tag}", group=f"djg{tag}") as (hub, _, learners), \
            Exchange() as box:
        yield hub, learners, box, dict(zip(ANSWERS, learners.names))


def hand_in(page, learners, name, kind, box):
    """Write the ``kind`` answer into the first exercise, save, and submit from a new cell;
    the cell's output (not waited for: the three learners submit at once)."""
    write(page, cell(page, "def allreduce_naive(comm, x):"), ANSWERS[kind])
    page.keyboard.press("Escape")
    page.keyboard.press("Control+s")
    saved = Path(learners.home(name)) / "dlhack" / "labs" / f"{LAB}.ipynb"
    deadline = time.monotonic() + 60
    while MARKS[kind] not in saved.read_text() and time.monotonic() < deadline:
        time.sleep(0.5)
    assert MARKS[kind] in saved.read_text(), "the notebook was not saved"
    return add_cell(page, f"!dlhack submit {LAB} " + " ".join(box.options))


def feedback_page(page, hub, learners, name, out):
    """Open the feedback that the cell ``out`` fetched, in JupyterLab; the page's body."""
    from playwright.sync_api import expect

    expect(out).to_contain_text("feedback: ", timeout=120_000)
    found = re.search(r"feedback: (\S.*\.html)", out.inner_text()).group(1)
    rel = Path(found).relative_to(learners.home(name))  # fetched into ~/dlhack
    assert rel.parts[0] == "dlhack", rel
    page.goto(f"{hub.url}/user/{name}/lab/tree/{urllib.parse.quote(rel.as_posix())}")
    frame = page.frame_locator(".jp-HTMLViewer iframe").first
    expect(frame.locator("h1")).to_contain_text(f"feedback for {name}", timeout=90_000)
    return frame.locator("body")


def grade_class(box, tmp_path):
    """The instructor: collect, grade the first exercise in the sandbox, release; the CSV rows."""
    course = tmp_path / "course"
    box.nbgrader(course, "collect", LAB)
    status = grade([str(course / "submitted"), "--lab", LAB, "-e", "allreduce_naive",
                    "-t", "5", "--csv", str(tmp_path / "grades.csv"),
                    "--feedback", str(course / "feedback"), "-q"])
    assert status == 0
    box.nbgrader(course, "release_feedback", LAB)
    with open(tmp_path / "grades.csv") as f:
        return list(csv.DictReader(f))


@pytest.mark.timeout(1200)  # with the room's set-up and teardown: 4-10 min on 2 cores
def test_three_learners_hand_in_from_jupyterlab_and_read_their_feedback(trio, tmp_path):
    from playwright.sync_api import expect, sync_playwright

    hub, learners, box, who = trio
    box.release(tmp_path / "course", LAB, SOLUTION)
    SHOTS.mkdir(parents=True, exist_ok=True)
    passwords = dict(learners.accounts)
    with sync_playwright() as pw:
        browser = pw.chromium.launch(executable_path=chromium(), args=CHROMIUM_ARGS,
                                     headless=True)
        pages = {}
        with contextlib.closing(browser), shots_on_failure(pages, "handin", hub):
            for name in who.values():  # all three spawn at once
                pages[name] = log_in(browser, hub, name, passwords[name])
                # leaving an edited notebook for the feedback page: JupyterLab asks; go
                pages[name].on("dialog", lambda dialog: dialog.accept())
            for name in who.values():
                open_lab(pages[name], hub, name)
            outs = {name: hand_in(pages[name], learners, name, kind, box)
                    for kind, name in who.items()}
            for kind, name in who.items():
                expect(outs[name]).to_contain_text(STAMP, timeout=120_000)
                pages[name].screenshot(path=SHOTS / f"handin_{kind}_submitted.png")
            mine, other = who["right"], who["wrong"]
            history = add_cell(pages[mine], "!dlhack submit --history " + " ".join(box.options))
            expect(history).to_contain_text(f"{mine} {LAB} ", timeout=60_000)
            assert other not in history.inner_text()  # a learner's history is their own

            rows = grade_class(box, tmp_path)
            assert len(rows) == 3, rows
            assert {r["student_id"]: r["score"] for r in rows} == {
                name: SCORES[kind] for kind, name in who.items()}, rows

            fetch = f"!dlhack submit --feedback {LAB} " + " ".join(box.options)
            outs = {name: add_cell(pages[name], fetch) for name in who.values()}
            seen = {}
            for kind, name in who.items():
                body = feedback_page(pages[name], hub, learners, name, outs[name])
                expect(body).to_contain_text(f"Score: {SCORES[kind]} / 3")
                for other in who.values():
                    if other != name:
                        expect(body).not_to_contain_text(other)
                seen[kind] = body.inner_text()
                pages[name].screenshot(path=SHOTS / f"handin_{kind}_feedback.png")
            assert "What did not pass" not in seen["right"]
            # the failing test's message, and the rank counts it failed at
            assert re.search(r"\d+ ranks?: failed", seen["wrong"]), seen["wrong"]
            assert "test_sum_matches_serial" in seen["wrong"]
            assert "rank 0: the result differs from the serial reference" in seen["wrong"]
            assert "no rank finished within" in seen["hangs"], seen["hangs"]
            # where it hung: "rank 0 was" at one rank, "ranks 0 and 1 were" at two (whichever
            # rank count the grader stopped at first)
            assert re.search(r"ranks? \d[\d, ]* (was|were) still waiting in allreduce_naive",
                             seen["hangs"]), seen["hangs"]

            nosy, target = who["wrong"], who["right"]
            page = pages[nosy]
            open_lab(page, hub, nosy)
            theirs = Path(learners.home(target))
            peek = add_cell(page, f"!cat {theirs}/dlhack/labs/{LAB}.ipynb "
                                  f"{theirs}/dlhack/{LAB}/feedback/*/*.html; "
                                  f"ls {box.root}/dlhack/inbound {box.root}/dlhack/feedback")
            expect(peek).to_contain_text("Permission denied", timeout=60_000)
            text = peek.inner_text()
            assert text.count("Permission denied") >= 3, text
            assert "allreduce_naive" not in text and "feedback for" not in text, text
            page.screenshot(path=SHOTS / "handin_peek_refused.png")
