"""The per-rank time breakdown and its verdict: each planted slowdown is named."""
import json
import os
import subprocess
import sys

import pytest

from dlhack.profile import PHASES, format_breakdown, verdict


def summary(*per_rank, threads=1):
    return {"ranks": [{"rank": r, "ms": dict(zip(PHASES, ms)), "threads": threads}
                      for r, ms in enumerate(per_rank)]}


BALANCED = summary((1, 40, 60, 1, 3, 2), (1, 41, 59, 1, 3, 2))


def test_balanced_compute_bound_run_has_no_usual_cause():
    text = verdict(BALANCED, batchsize=64, ranks_per_node=2, cores=2)
    assert "No usual cause" in text


def test_oversubscribed_threads_are_named():
    text = verdict(summary((1, 40, 60, 1, 3, 2), threads=4), batchsize=64, ranks_per_node=2,
                   cores=2)
    assert "oversubscribed" in text and "OMP_NUM_THREADS=1" in text


def test_tiny_batch_is_named():
    text = verdict(summary((0, 3, 4, 1, 5, 4), (0, 3, 4, 1, 5, 4)), batchsize=1, cores=2)
    assert "per-rank batch of 1" in text


def test_waiting_for_a_straggler_is_named():
    text = verdict(summary((1, 40, 60, 80, 3, 2), (1, 90, 130, 1, 3, 2)), batchsize=64, cores=2)
    assert "wait for each other" in text


def test_baseline_comparison_names_the_phase_that_grew():
    text = verdict(summary((1, 40, 60, 1, 30, 2)), baseline=BALANCED, batchsize=64, cores=8)
    assert "'allreduce' grew most" in text


def test_breakdown_table_has_a_row_per_rank():
    assert len(format_breakdown(BALANCED).splitlines()) == 3


def profiled_run(tmp_path, threads, batchsize):
    env = {**os.environ, "OMP_NUM_THREADS": str(threads), "OPENBLAS_NUM_THREADS": str(threads)}
    proc = subprocess.run(
        ["mpiexec", "-n", "2", sys.executable, "-m", "dlhack.train", "--profile",
         "--iterations", "8", "--batchsize", str(batchsize), "--units", "16", "--layers", "1",
         "--n-train", "300", "--eval-every", "0", "--n-eval", "8", "--no-progress",
         "--out", str(tmp_path)], check=False, env=env, capture_output=True, text=True,
        timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads((tmp_path / "metrics.json").read_text())["verdict"]


@pytest.mark.parametrize("threads, batchsize, cause", [
    (1, 1, "per-rank batch of 1"),
    (2, 32, "oversubscribed"),
])
def test_train_profile_names_a_planted_slowdown(tmp_path, threads, batchsize, cause):
    stdout, text = profiled_run(tmp_path, threads, batchsize)
    assert cause in text
    assert "allreduce" in stdout and cause in stdout  # rank 0 printed breakdown and verdict
