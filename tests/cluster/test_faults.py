"""Faults in a real data-parallel run: ``mpiexec -n 2 python -m dlhack.train``.

- a rank killed with SIGKILL ends the whole job within seconds, no process left behind;
- ``--resume auto`` then finishes with exactly the parameters of an uninterrupted run;
- a truncated or damaged snapshot stops every rank with a clear error (no hang).

Each test launches mpiexec itself, in its own session and with a timeout: a test that kills
a rank cannot run inside pytest-isolate-mpi's own mpiexec. The model is tiny (16 units, one
layer, 400 sentences), so each run takes seconds.
"""
import json
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from mpijobs import ENV, KILL_DEADLINE, kill_one_rank

from dlhack.snapshot import find_snapshots, read_snapshot
from tests.support import BIN

ITERATIONS, EVERY = 50, 5
TRAIN = ["-m", "dlhack.train", "--iterations", str(ITERATIONS), "--snapshot-every", str(EVERY),
         "--eval-every", "0", "--n-eval", "8", "--units", "16", "--layers", "1",
         "--n-train", "400", "--dropout", "0", "--no-progress", "--communicator", "ring"]


def mpiexec(out, *extra, ranks=2):
    return [str(BIN / "mpiexec"), "-n", str(ranks), sys.executable, *TRAIN, "--out", str(out),
            *extra]


def run(out, *extra, timeout=120):
    """Run the training to its end; the CompletedProcess (stdout and stderr as text)."""
    return subprocess.run(mpiexec(out, *extra), env=ENV, capture_output=True, text=True,
                          timeout=timeout, start_new_session=True, check=False)


@pytest.fixture(scope="module")
def killed_run(tmp_path_factory):
    """A run whose rank 1 was killed after its first snapshot: (out dir, kill figures)."""
    out = tmp_path_factory.mktemp("faults") / "killed"
    return out, kill_one_rank(mpiexec(out), out, rank=1)


def model_arrays(out):
    with np.load(Path(out) / "model.npz") as npz:
        return dict(npz)


def test_killed_rank_ends_the_job(killed_run):
    out, (seconds, returncode, survivors, output) = killed_run
    print(f"kill rank 1 -> job ended after {seconds:.2f} s, mpiexec exit {returncode}")
    assert returncode is not None and returncode != 0, output
    assert not survivors, f"still running {KILL_DEADLINE} s after the kill: {survivors}"
    assert seconds < KILL_DEADLINE
    assert not (out / "model.npz").exists()  # it really was interrupted
    for path in find_snapshots(out):  # the kill never leaves a bad snapshot behind
        read_snapshot(path)


@pytest.mark.slow
def test_killing_the_writer_ends_the_job(tmp_path):
    """Rank 0 writes the snapshots: killing it (perhaps mid-write) must end the job too."""
    out = tmp_path / "run"
    seconds, returncode, survivors, output = kill_one_rank(mpiexec(out), out, rank=0)
    assert returncode not in (None, 0) and not survivors and seconds < KILL_DEADLINE, output
    for path in find_snapshots(out):
        read_snapshot(path)


def test_resume_matches_uninterrupted_run(killed_run, tmp_path):
    out, _ = killed_run
    reference = run(tmp_path / "reference")
    assert reference.returncode == 0, reference.stdout + reference.stderr
    resumed = run(out, "--resume", "auto")
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    match = re.search(r"snapshot: resumed from \S+ at iteration (\d+)", resumed.stdout)
    assert match and 0 < int(match.group(1)) < ITERATIONS, resumed.stdout
    print(f"resumed at iteration {match.group(1)} of {ITERATIONS}")

    expected, got = model_arrays(tmp_path / "reference"), model_arrays(out)
    assert expected.keys() == got.keys()
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


@pytest.mark.parametrize("damage", ["truncate", "flip"])
def test_damaged_snapshot_is_refused(killed_run, tmp_path, damage):
    out, _ = killed_run
    path = tmp_path / "bad.snapshot"
    data = bytearray(find_snapshots(out)[-1].read_bytes())  # the oldest: --resume may prune
    if damage == "truncate":
        data = data[:len(data) * 2 // 3]
    else:
        data[-len(data) // 3] ^= 0x40
    path.write_bytes(bytes(data))
    result = run(tmp_path / "run", "--resume", str(path), timeout=60)
    output = result.stdout + result.stderr
    assert result.returncode != 0, output
    expected = ("is truncated: the header expects" if damage == "truncate"
                else "is damaged: the header expects payload sha256")
    assert f"SnapshotError: snapshot {path} {expected}" in output, output
    assert not (tmp_path / "run" / "model.npz").exists()


@pytest.mark.slow
def test_resume_with_dropout_matches(tmp_path):
    """With dropout each rank draws its own masks: the snapshot carries every rank's RNG."""
    reference = run(tmp_path / "reference", "--dropout", "0.3", "--iterations", "40")
    assert reference.returncode == 0, reference.stdout + reference.stderr
    oldest = find_snapshots(tmp_path / "reference")[-1]  # kept: 30, 35 and 40
    resumed = run(tmp_path / "resumed", "--dropout", "0.3", "--iterations", "40",
                  "--resume", str(oldest))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "at iteration 30" in resumed.stdout
    expected, got = model_arrays(tmp_path / "reference"), model_arrays(tmp_path / "resumed")
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)


def test_sharded_update_resumes_exactly(tmp_path):
    """--impl fused on one node divides Adam's step among the ranks (dlhack.parallel.sharded):
    rank 0's snapshot still holds every rank's chunk of the moments, so a resume from it ends
    with the parameters of the run that wrote it."""
    fused = ["--impl", "fused", "--communicator", "shm", "--iterations", "20"]
    reference = run(tmp_path / "reference", *fused)
    assert reference.returncode == 0, reference.stdout + reference.stderr
    metrics = json.loads((tmp_path / "reference" / "metrics.json").read_text())
    assert metrics["sharded_update"] is True
    oldest = find_snapshots(tmp_path / "reference")[-1]  # kept: 10, 15 and 20
    resumed = run(tmp_path / "resumed", *fused, "--resume", str(oldest))
    assert resumed.returncode == 0, resumed.stdout + resumed.stderr
    assert "at iteration 10" in resumed.stdout
    expected, got = model_arrays(tmp_path / "reference"), model_arrays(tmp_path / "resumed")
    for name in expected:
        np.testing.assert_array_equal(got[name], expected[name], err_msg=name)
