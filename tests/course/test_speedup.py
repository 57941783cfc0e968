"""Lesson 3's speedup.py: every job timed three ways at once (the job, its steps, its dev set).

The lesson's claims rest on the split between a job's training steps and its dev set, so the
dev set's seconds must be the Evaluator's own, caught in the jobs of both libraries (whose
multi-node evaluators replace ``evaluate`` on the instance), and the speed-ups must divide the
right way round: throughput 2 ranks over 1, the dev set's seconds 1 rank over 2.
"""
import importlib.util
import io
import json
import sys

import pytest

from dlhack.jobs import run as jobs
from tests.support import ROOT

SCRIPT = ROOT / "lessons" / "scripts" / "03_chainermn" / "speedup.py"


def speedup_module():
    spec = importlib.util.spec_from_file_location("lesson3_speedup", SCRIPT)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_speed_ups_divide_throughput_up_and_seconds_down():
    job = {"job": 100.0, "steps": 125.0, "dev set": 0.5}
    runs = {"lib": {1: [job, job | {"job": 90.0}, job | {"job": 110.0}],
                    2: [{"job": 230.0, "steps": 240.0, "dev set": 0.2}] * 3}}
    result = speedup_module().speedups(runs)
    assert result["speedup"]["lib"] == pytest.approx(2.3)  # 230 over the median, 100
    assert result["speedup_steps_alone"]["lib"] == pytest.approx(240 / 125)
    assert result["speedup_dev_set"]["lib"] == pytest.approx(2.5)  # 0.5 s over 0.2 s


def test_every_job_times_its_dev_set_apart_from_its_steps(tmp_path):
    out = tmp_path / "speedup"
    cmd = [sys.executable, str(SCRIPT), "--iterations", "4", "--repeats", "1", "--n-train",
           "600", "--units", "16", "--timeout", "120", "--out", str(out)]
    # one supervised process: on the timeout it and every job it started are killed
    done = jobs.run(cmd, n=1, single=True, timeout=300, stream=io.StringIO(), prefix=False)
    printed = "\n".join(done.output[0])
    assert done.returncode == 0 and not done.timed_out, printed[-3000:]
    result = json.loads((out / "speedup.json").read_text())
    for lib in ("chainermn", "dlhack.parallel"):
        for n in (1, 2):
            calls = json.loads((out / f"{lib}-{n}-0" / "dev_seconds.json").read_text())
            assert len(calls) == 2 and all(s > 0 for s in calls), (lib, n, calls)  # at 2 and 4
            elapsed = json.loads((out / f"{lib}-{n}-0" / "log").read_text())[-1]["elapsed_time"]
            (job,) = result["runs"][lib][str(n)]
            assert job["dev set"] == pytest.approx(sum(calls)) and sum(calls) < elapsed
            assert job["steps"] == pytest.approx(job["job"] * elapsed / (elapsed - sum(calls)))
    assert set(result["speedup_dev_set"]) == {"chainermn", "dlhack.parallel"}
    assert "dev set" in printed and "steps" in printed
