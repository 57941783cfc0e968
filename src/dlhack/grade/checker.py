"""The grader's side of its checking process: where every graded test's outcome is decided.

    checker = Checker(plan, folder)     # one per grading (schedule.grade); starts at once
    records = decide(checker, CheckRequest(test, run_dir, index, ranks, seed, shim), records)
    checker.close()

A graded test has two halves (graded/README.md): ``test_NAME`` runs in every rank beside learner
code and only *observes* (``obs.RANK.I``); ``check_NAME`` runs here, in ``check_outside.py``, a
process of the grader's that never imports learner code, and decides. A rank's own record of a
test (``result.RANK.I.json``) can then only lose points: "passed" there means "observed, without
raising", and becomes the check's verdict; a rank that says passed without an observation had
its record written by learner code (tampered); a rank that says it failed keeps its failure.

The process starts when the grading does, so its imports (numpy, the lab's helpers: up to a
second with Chainer) overlap the first launch; requests are one JSON line each, answered within
``ANSWER_S`` or the process is killed (and started again for the next). Its output goes to
``checker.log`` in the grading's folder, whose end is quoted when it fails.
"""
import json
import os
import select
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path

from dlhack.grade.plan import child_env, write_files
from dlhack.jobs.runfiles import tail

CHECK_SCRIPT = Path(__file__).with_name("check_outside.py")
ANSWER_S = 60.0  # s: the longest one request may take (lab 01 runs models to compare with)
FORGED = ("your code wrote the grader's record of this test: the record says the test ran, "
          "but the grader's observation of it is missing")


class CheckerError(Exception):
    """The checking process failed (not the learner's doing)."""


@dataclass
class CheckRequest:
    """One test's run in one launch, as the checker needs it."""

    test: object       # plan.GradedTest
    run_dir: Path      # the launch's run folder: obs.RANK.I and traffic.RANK
    index: int         # I: the test's place in the launch
    ranks: int
    seed: int          # the grader's draw for the test's inputs (both halves use it)
    shim: str = None   # why there is no MPI shim in the ranks, or None


class Checker:
    """One checking process for one lab, kept for a whole grading."""

    def __init__(self, plan, folder):
        self.root = Path(folder) / "checker"
        write_files(plan.files, self.root)
        self.log = Path(folder) / "checker.log"
        self.lock, self.proc, self.count = threading.Lock(), None, 0
        self._start()

    def _start(self):
        with open(self.log, "ab") as log:
            self.proc = subprocess.Popen(
                [sys.executable, str(CHECK_SCRIPT), str(self.root)], cwd=self.root,
                env=child_env(), stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=log)

    def ask(self, request, timeout=ANSWER_S):
        """The process's reply to ``request``; CheckerError when it fails or is too slow."""
        with self.lock:
            if self.proc is None or self.proc.poll() is not None:
                self._start()
            self.count += 1
            request = {**request, "id": self.count}
            try:
                self.proc.stdin.write((json.dumps(request) + "\n").encode())
                self.proc.stdin.flush()
                reply = json.loads(_read_line(self.proc.stdout.fileno(), timeout))
            except (OSError, ValueError, TimeoutError) as err:
                self._stop()
                raise CheckerError(f"the grader's checking process failed ({err}): "
                                   f"{tail(self.log, 600)}") from None
        if reply.get("id") != self.count or "error" in reply:
            raise CheckerError(f"the grader's check could not run: {reply.get('error')}")
        return {int(rank): verdict for rank, verdict in reply["verdicts"].items()}

    def _stop(self):
        if self.proc is not None:
            self.proc.kill()
            self.proc.wait()
            self.proc = None

    def close(self):
        """End the process: its input closes, it exits; killed if it does not within 5 s."""
        with self.lock:
            if self.proc is None:
                return
            try:
                self.proc.stdin.close()
                self.proc.wait(timeout=5)
            except (OSError, subprocess.TimeoutExpired):
                pass
            self._stop()


def _read_line(fd, timeout):
    """One line from ``fd`` within ``timeout`` seconds (the process writes whole lines)."""
    deadline, data = time.monotonic() + timeout, b""
    while not data.endswith(b"\n"):
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([fd], [], [], left)[0]:
            raise TimeoutError(f"no answer within {timeout:g} s")
        chunk = os.read(fd, 1 << 16)
        if not chunk:
            raise OSError("it exited")
        data += chunk
    return data


def decide(checker, case, records):
    """``records`` (rank -> the rank's record, watch.py) with each "passed" replaced by the
    check's verdict, or by tampered when the rank's observation is missing."""
    decided = dict(records)
    observed = [rank for rank, record in records.items() if record["outcome"] == "passed"]
    present = []
    for rank in observed:
        if (Path(case.run_dir) / f"obs.{rank}.{case.index}").is_file():
            present.append(rank)
        else:
            decided[rank] = {**records[rank], "outcome": "tampered", "message": FORGED}
    if not present:
        return decided
    test = case.test
    try:
        verdicts = checker.ask({
            "file": test.nodeid.split("::")[0], "name": test.name.split("[")[0],
            "params": dict(test.params), "seed": case.seed, "size": case.ranks,
            "ranks": present, "run_dir": str(case.run_dir), "index": case.index,
            "shim": case.shim})
    except CheckerError as err:
        verdicts = {rank: {"outcome": "error", "message": str(err)} for rank in present}
    for rank in present:
        verdict = verdicts.get(rank) or {"outcome": "error", "message": "the check said nothing"}
        decided[rank] = {**records[rank], "outcome": verdict["outcome"],
                         "message": verdict["message"], "exc_type": "", "frames": []}
    return decided
