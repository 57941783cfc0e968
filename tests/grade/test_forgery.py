"""The forged pass of issue 24 and its variants: learner code that writes the grader's records of
its own tests scores what its answers deserve, because a test's outcome is decided outside the
rank (grade/checker.py), never by a record written inside it.

Every plant answers allreduce_naive wrongly (it returns the mean), then, as its cell is imported
in the first test, finds the run's folder, id and tests one way or another, writes a passing
``result.RANK.I.json`` for every rank and test (and observations, where it can), the end records
with exit status 0, and leaves with ``os._exit(0)`` before any test runs on. All grade one
exercise (6 runs: ranks 1 to 4, then 2 and 3).
"""
import shutil

import pytest

from dlhack.grade.plan import load_plan
from dlhack.grade.schedule import grade
from tests.grade.gradetools import solution_cell, solution_notebook, with_cell
from tests.support import ROOT

LAB, EXERCISE = "02_collectives", "allreduce_naive"

# Write passing records for every test of this launch; OBS(i) is written as test i's
# observation when it is not None. RUN, RUN_ID and NODEIDS come from each variant.
FORGE = '''
import json as _json
import os as _os
from mpi4py import MPI as _MPI


def _write(path, record):  # whole, as the recorder writes: a torn record is no forgery at all
    with open(path + ".tmp", "w") as f:
        _json.dump(record, f)
    _os.replace(path + ".tmp", path)


def _forge(run, run_id, nodeids, obs=None, before=None):
    rank, size = _MPI.COMM_WORLD.rank, _MPI.COMM_WORLD.size
    for i, nodeid in enumerate(nodeids):
        if before is not None:
            before(nodeid)
        if obs is not None:
            obs(i, nodeid)
        record = {"rank": rank, "size": size, "nodeid": nodeid, "run_id": run_id,
                  "duration_s": 0.1, "outcome": "passed", "message": ""}
        _write(_os.path.join(run, f"result.{rank}.{i}.json"), record)
    _write(_os.path.join(run, f"result.{rank}.end.json"),
           {"rank": rank, "size": size, "run_id": run_id, "exit_code": 0})
    _os._exit(0)


def _environ(name):
    for entry in open("/proc/self/environ", "rb").read().split(b"\\0"):
        if entry.startswith(name.encode() + b"="):
            return entry.split(b"=", 1)[1].decode()
    return ""


def _nodeids():
    return [a for a in open("/proc/self/cmdline", "rb").read().decode().split("\\0") if "::" in a]
'''
VARIANTS = {
    # The forgery: the driver's locals, found by walking the stack.
    "frame": '''
import inspect as _inspect
for _f in _inspect.stack():
    _l = _f.frame.f_locals
    if "private" in _l and "run_id" in _l and "index" in _l:
        _forge(str(_l["private"]), _l["run_id"], list(_l["index"]))
''',
    # The driver's own writer, found through gc: it writes records and empty observations.
    "gc": '''
import gc as _gc
for _o in _gc.get_objects():
    if type(_o).__name__ == "Recorder" and callable(getattr(_o, "finish", None)):
        _cells = [c.cell_contents for c in _o.finish.__closure__ or ()]
        _index = next(c for c in _cells if isinstance(c, dict))
        for _n in _index:
            _o.finish(_n, {"outcome": "passed", "message": ""}, {})
        _os._exit(0)
''',
    # The same writer, handed wrong answers dressed as observations of every test.
    "gc_observed": '''
import gc as _gc
import numpy as _np
for _o in _gc.get_objects():
    if type(_o).__name__ == "Recorder" and callable(getattr(_o, "finish", None)):
        _cells = [c.cell_contents for c in _o.finish.__closure__ or ()]
        _index = next(c for c in _cells if isinstance(c, dict))
        for _n in _index:
            _o.finish(_n, {"outcome": "passed", "message": ""},
                      {"got": _np.zeros(7), "x": _np.zeros(7)})
        _os._exit(0)
''',
    # What the driver took out of os.environ is still in /proc/self/environ.
    "environment": '''
_forge(_environ("DLHACK_GRADE_DIR"), _environ("DLHACK_RUN_ID"), _nodeids())
''',
    # The run folder found through a file descriptor this process holds (its output file),
    # with empty observation files written beside the records.
    "inherited_fd": '''
for _fd in _os.listdir("/proc/self/fd"):
    try:
        _target = _os.readlink(f"/proc/self/fd/{_fd}")
    except OSError:
        continue
    if "/run-" in _target:
        _run = _os.path.dirname(_target)

        def _obs(i, nodeid):
            with open(_os.path.join(_run, f"obs.{_MPI.COMM_WORLD.rank}.{i}"), "wb") as f:
                f.write(b"DLOBS1\\n" + (2).to_bytes(8, "little") + b"{}")

        _forge(_run, _environ("DLHACK_RUN_ID"), _nodeids(), obs=_obs)
''',
}
# What shows that each forgery did act, and was seen through: a phrase of the first test's message.
SEEN = {"frame": "observation of it is missing", "gc": "rank 0 reported no got",
        "gc_observed": "differs from the serial reference",
        "environment": "your code wrote", "inherited_fd": "your code"}  # records or observations
# allreduce_naive answered wrongly: every rank returns the mean (its own sum over the size).
WRONG = '''
def allreduce_naive(comm, x):
    total = np.array(x, copy=True)
    if comm.rank == 0:
        buf = np.empty_like(x)
        for src in range(1, comm.size):
            comm.Recv(buf, source=src)
            total += buf
        for dst in range(1, comm.size):
            comm.Send(total, dest=dst)
    else:
        comm.Send(total, dest=0)
        comm.Recv(total, source=0)
    return total // comm.size if total.dtype.kind == "i" else total / comm.size
'''


def plant(variant, answer=WRONG):
    """The solution notebook with allreduce_naive replaced by ``answer`` and the forgery."""
    source = "import numpy as np\n" + answer + FORGE + VARIANTS[variant]
    return with_cell(solution_notebook(LAB), EXERCISE, source)


@pytest.fixture(scope="module")
def plan():
    return load_plan(LAB)


def test_the_plants_reach_what_they_aim_at():
    """Each variant's code compiles, and the solution's answer cell is what WRONG replaces."""
    assert "def allreduce_naive(comm, x)" in solution_cell(LAB, EXERCISE)
    for variant, code in VARIANTS.items():
        compile(FORGE + code, variant, "exec")


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_a_forged_pass_scores_what_the_answers_deserve(variant, plan, tmp_path):
    result = grade(plan, plant(variant), exercises=[EXERCISE], timeout=8, workdir=tmp_path)
    ex = result["exercises"][0]
    assert ex["max_score"] == 3
    assert result["score"] == 0, (variant, [(t["name"], t["outcome"], t["message"])
                                            for t in ex["tests"]])
    assert all(t["outcome"] != "passed" for t in ex["tests"])
    assert SEEN[variant] in ex["tests"][0]["message"], ex["tests"][0]["message"]


def test_an_early_exit_after_observing_fails_the_test(plan, tmp_path):
    """Right answers, then ``os._exit(0)`` in the middle of the first test: no rank reported its
    observation of it, so it failed, and the tests behind it run again and pass."""
    answer = solution_cell(LAB, EXERCISE).replace(
        "    return total", "    import os\n    if x.shape == (7,):\n        os._exit(0)\n"
                           "    return total", 1)
    assert "_exit" in answer
    result = grade(plan, with_cell(solution_notebook(LAB), EXERCISE, answer),
                   exercises=[EXERCISE], timeout=8, workdir=tmp_path)
    tests = {t["name"]: t for t in result["exercises"][0]["tests"]}
    assert tests["test_sum_matches_serial"]["outcome"] == "crashed"
    assert "exited without finishing the test" in tests["test_sum_matches_serial"]["message"]
    assert tests["test_any_shape_and_dtype"]["outcome"] == "passed"


def test_a_test_without_a_check_half_is_never_passed_from_a_rank(tmp_path):
    """A graded test whose file has no check_NAME (a lab not yet converted) scores 0 with an
    error and a warning, however its ranks end: only a check outside them can pass a test."""
    graded = tmp_path / "root" / "graded"
    (graded / "99_plain").mkdir(parents=True)
    for path in (ROOT / "graded").glob("*.py"):
        shutil.copyfile(path, graded / path.name)
    (graded / "99_plain" / "test_anything.py").write_text(
        "def test_passes_in_the_rank(submission):\n    assert submission.answer == 42\n")
    submission = with_cell(solution_notebook(LAB), EXERCISE, "answer = 42\n")
    result = grade(load_plan("99_plain", tmp_path / "root"), submission, timeout=20,
                   workdir=tmp_path)
    test = result["exercises"][0]["tests"][0]
    assert (result["score"], test["outcome"]) == (0, "error"), test
    assert "no check half" in test["message"]
    assert any("no check half" in w for w in result["warnings"])
