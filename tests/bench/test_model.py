"""``dlhack bench model`` (dlhack.bench.model): one measurement, in a fresh worker process with
one BLAS thread, reports throughput and memory for either LSTM formulation. (The whole bench,
both models side by side and repeated, is ``make bench``'s: minutes.)"""
import argparse

import pytest

from dlhack.bench.model import measure
from dlhack.jobs.mpiexec import THREAD_VARIABLES


@pytest.mark.parametrize("impl", ["fast", "nstep"])
def test_a_worker_reports_its_figures_with_one_blas_thread(impl, monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.setenv(name, "3")  # a shell that asked for more: the worker still gets one
    args = argparse.Namespace(batchsize=4, iterations=2, corpus=None)
    figures = measure(impl, 8, 1, args)
    assert figures["sentences_per_sec"] > 0
    assert figures["peak_rss_mb"] >= figures["rss_before_training_mb"] > 0
    assert {blas["num_threads"] for blas in figures["blas"]} == {1}
