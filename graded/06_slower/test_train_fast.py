"""Lab 6 (06_slower): the learner's train_fast.py, train_slow.py without its slow-downs.

Each test runs the script at 1, 2 and 3 ranks (slower.py, watch.py) with 60 training, 30 dev and
25 test sentences and --batchsize 4, and grades what does not depend on the machine's load:
sentences per rank per epoch, the per-rank batch, BLAS threads per rank, who evaluates and who
translates, and which devices each rank chooses. No test reads a clock.
"""
import math
import os

import pytest
from slower import (
    BATCH,
    N_DEV,
    N_TEST,
    N_TRAIN,
    RANKS,
    fail,
    learner_job,
    prefetch,
    ranks_text,
)

TIMEOUT = 600  # s: three or four jobs of a few seconds each (and waits for other tests' jobs)


@pytest.fixture(scope="module", autouse=True)
def jobs_started(submission):
    """Every job of this file, started at once in the background (two at a time)."""
    prefetch(submission)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_sentences_per_rank_per_epoch(submission):
    """Each rank's epoch is its shard of the corpus, about n / N sentences, not the whole corpus."""
    for n in RANKS:
        job = learner_job(submission, n)
        most = math.ceil(N_TRAIN / n)
        for rank, rec in enumerate(job.records):
            if rec["shard"] > most:
                fail(f"the corpus: at {ranks_text(n)} rank {rank} trains on {rec['shard']} "
                     f"sentences per epoch, where {most} would do ({N_TRAIN} / {n}): every rank "
                     f"repeats the others' work; give each its shard (chainermn.scatter_dataset)")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_batch_per_rank(submission):
    """Each rank's batch is --batchsize sentences, however many ranks there are."""
    for n in RANKS:
        job = learner_job(submission, n)
        for rank, rec in enumerate(job.records):
            if max(rec["batch_sizes"]) != BATCH:
                fail(f"the batch: at {ranks_text(n)} rank {rank}'s batches hold up to "
                     f"{max(rec['batch_sizes'])} sentences, not --batchsize {BATCH}: a smaller "
                     f"per-rank batch means more steps, each with its allreduce, for the same "
                     f"work; the effective batch is batchsize x {n}")


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_blas_threads_per_rank(submission):
    """Started with no thread settings, the ranks' BLAS threads do not outnumber the cores."""
    cores = os.cpu_count() or 1
    for n in RANKS:
        job = learner_job(submission, n)
        for rank, rec in enumerate(job.records):
            if rec["blas_threads"] * n > max(n, cores):
                fail(f"the threads: at {ranks_text(n)} rank {rank} runs {rec['blas_threads']} "
                     f"BLAS threads: {rec['blas_threads'] * n} threads for {cores} cores, which "
                     f"take turns and wait for each other; one BLAS thread per rank "
                     f"(OMP_NUM_THREADS=1, set before numpy is imported)")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_who_evaluates(submission):
    """Each dev sentence is scored by one rank (the multi-node evaluator when ranks share them)."""
    for n in RANKS:
        job = learner_job(submission, n)
        evaluators = [ev for rec in job.records for ev in rec["evaluators"]]
        scored = sum(ev["sentences"] for ev in evaluators)
        if not evaluators:
            fail(f"the evaluation: at {ranks_text(n)} no rank evaluates on the dev set any more")
        if scored >= N_DEV + n:
            fail(f"the evaluation: at {ranks_text(n)} the ranks score {scored} dev sentences "
                 f"for {N_DEV} ({[ev['sentences'] for ev in evaluators]} per rank): each "
                 f"evaluation repeats the same work on every rank; scatter the dev set")
        if len(evaluators) > 1 and not all(ev["multi_node"] for ev in evaluators):
            fail(f"the evaluation: at {ranks_text(n)} each rank scores its share of the dev set, "
                 f"but reports its own share's loss: wrap the Evaluator with "
                 f"chainermn.create_multi_node_evaluator")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_who_translates(submission):
    """BLEU's test sentences are translated once in all, not once per rank."""
    for n in RANKS:
        job = learner_job(submission, n)
        per_rank = [rec["translated"] for rec in job.records]
        if sum(per_rank) != N_TEST:
            fail(f"BLEU: at {ranks_text(n)} the ranks translate {per_rank} test sentences, "
                 f"{sum(per_rank)} for {N_TEST}: translate each once (a shard per rank, the "
                 f"hypotheses gathered and scored on one rank; or rank 0 alone)")
        if "test BLEU" not in job.output:
            fail(f"BLEU: at {ranks_text(n)} nothing printed 'test BLEU': keep the score")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_one_device_per_rank(submission):
    """With --gpu (simulated on CPU), each rank chooses one GPU, once: its intra_rank."""
    for n in RANKS[1:]:
        job = learner_job(submission, n, gpu=True)
        for rank, rec in enumerate(job.records):
            comm = next((e for e in rec["events"] if e[0] == "communicator"), None)
            if comm is None:
                fail(f"the device: rank {rank} creates no ChainerMN communicator")
            want = f"@cupy:{comm[2]}"
            gpus = [e[1] for e in rec["events"] if e[0] == "device" and e[1].startswith("@cupy")]
            wrong = sorted(set(gpus) - {want})
            if wrong or not gpus:
                fail(f"the device: with --gpu at {ranks_text(n)}, rank {rank} (intra_rank "
                     f"{comm[2]}) chose {', '.join(gpus) or 'no GPU'}: "
                     + (f"each rank that touches {wrong[0]} makes a CUDA context there (memory "
                        f"and time on a GPU that belongs to another rank); " if wrong else "")
                     + f"choose {want} once, after the communicator (simulated on CPU)")
