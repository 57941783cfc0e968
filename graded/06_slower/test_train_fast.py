"""Lab 6 (06_slower): the learner's train_fast.py, train_slow.py without its slow-downs.

Each test runs the script at 1, 2 and 3 ranks (slower.py, watch.py) with 60 training, 30 dev and
25 test sentences and --batchsize 4, on simulated nodes of 16 cores, and grades what does not
depend on the machine's load: which sentences each rank trains on, the per-rank batch, BLAS
threads per rank, how many sentences each rank evaluates and translates, the BLEU it prints
(against the grader's own), and, with --gpu on 2 simulated nodes, which devices each rank
chooses and which ranks write. No test reads a clock.
"""
import math
from collections import Counter

import pytest
from slower import (
    BATCH,
    CORES,
    GPU_HOSTS,
    N_DEV,
    N_TEST,
    N_TRAIN,
    RANKS,
    observe_jobs,
    prefetch,
    ranks_text,
    reference,
    threads_asked,
)

TIMEOUT = 600  # s: three or four jobs of a few seconds each (and waits for other tests' jobs)


@pytest.fixture(scope="module", autouse=True)
def jobs_started(submission):
    """Every job of this file, started at once in the background (two at a time)."""
    prefetch(submission)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_sentences_per_rank_per_epoch(submission, observe):
    """Each rank's epoch is its shard of the corpus, about n / N sentences, not the whole corpus,
    and the shards together hold every sentence once (or padded, as scatter_dataset pads)."""
    observe_jobs(submission, observe)


def check_sentences_per_rank_per_epoch(obs, run):
    jobs = obs["jobs"]
    corpus = Counter(reference()["train"])
    for n in RANKS:
        job = jobs[str(n)]
        if job["problem"]:
            return job["problem"]
        most = math.ceil(N_TRAIN / n)
        for rank, rec in enumerate(job["records"]):
            if rec["shard"] > most:
                return (f"the corpus: at {ranks_text(n)} rank {rank} trains on {rec['shard']} "
                        f"sentences per epoch, where {most} would do ({N_TRAIN} / {n}): every rank "
                        f"repeats the others' work; give each its shard (chainermn.scatter_dataset)")
        held = Counter(i for rec in job["records"] for i in rec["shard_ids"])
        missing = sum((corpus - held).values())
        if missing or sum((held - corpus).values()) >= n:
            return (f"the corpus: at {ranks_text(n)} the shards hold "
                    f"{[rec['shard'] for rec in job['records']]} sentences, the right sizes, but miss "
                    f"{missing} of the {N_TRAIN} training sentences and repeat others: the shards "
                    f"must split one order of the corpus (scatter_dataset with the same seed on "
                    f"every rank, not a per-rank seed or the same slice everywhere)")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_batch_per_rank(submission, observe):
    """Each rank's batch is --batchsize sentences, however many ranks there are."""
    observe_jobs(submission, observe)


def check_batch_per_rank(obs, run):
    jobs = obs["jobs"]
    for n in RANKS:
        job = jobs[str(n)]
        if job["problem"]:
            return job["problem"]
        for rank, rec in enumerate(job["records"]):
            if max(rec["batch_sizes"]) != BATCH:
                return (f"the batch: at {ranks_text(n)} rank {rank}'s batches hold up to "
                        f"{max(rec['batch_sizes'])} sentences, not --batchsize {BATCH}: a smaller "
                        f"per-rank batch means more steps, each with its allreduce, for the same "
                        f"work; the effective batch is batchsize x {n}")
    return None


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_blas_threads_per_rank(submission, observe):
    """Started with no thread settings on a simulated node of 16 cores, the ranks' BLAS threads
    (every variable OpenBLAS reads) do not outnumber the cores."""
    observe_jobs(submission, observe)


def check_blas_threads_per_rank(obs, run):
    jobs = obs["jobs"]
    for n in RANKS:
        job = jobs[str(n)]
        if job["problem"]:
            return job["problem"]
        for rank, rec in enumerate(job["records"]):
            threads = threads_asked(rec)
            if threads * n > max(n, CORES):
                asked = {k: v for k, v in (rec.get("blas_env") or {}).items() if v}
                return (f"the threads: at {ranks_text(n)} on a node of {CORES} cores, rank {rank} "
                        f"runs {threads} BLAS threads (numpy was imported with {asked or 'no thread setting'}"
                        f"): {threads * n} threads for {CORES} cores, which take turns and wait for "
                        f"each other; one BLAS thread per rank (OMP_NUM_THREADS=1 and "
                        f"OPENBLAS_NUM_THREADS=1, set before numpy is imported)")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_who_evaluates(submission, observe):
    """The ranks share the dev set: each scores about n / N sentences (the multi-node evaluator
    averaging their losses), not one rank all of them, nor every rank all of them."""
    observe_jobs(submission, observe)


def check_who_evaluates(obs, run):
    jobs = obs["jobs"]
    for n in RANKS:
        job = jobs[str(n)]
        if job["problem"]:
            return job["problem"]
        evaluators = [ev for rec in job["records"] for ev in rec["evaluators"]]
        scored = sum(ev["sentences"] for ev in evaluators)
        if not evaluators:
            return (f"the evaluation: at {ranks_text(n)} no rank evaluates on the dev set any more")
        per_rank = [sum(ev["sentences"] for ev in rec["evaluators"]) for rec in job["records"]]
        if scored < N_DEV + n and max(per_rank) > math.ceil(N_DEV / n):
            return (f"the evaluation: at {ranks_text(n)} the ranks score {per_rank} dev sentences: "
                    f"one rank evaluates while the others wait for it at the next allreduce; "
                    f"scatter the dev set and let every rank score its share")
        if scored >= N_DEV + n:
            return (f"the evaluation: at {ranks_text(n)} the ranks score {scored} dev sentences "
                    f"for {N_DEV} ({[ev['sentences'] for ev in evaluators]} per rank): each "
                    f"evaluation repeats the same work on every rank; scatter the dev set")
        if len(evaluators) > 1 and not all(ev["multi_node"] for ev in evaluators):
            return (f"the evaluation: at {ranks_text(n)} each rank scores its share of the dev set, "
                    f"but reports its own share's loss: wrap the Evaluator with "
                    f"chainermn.create_multi_node_evaluator")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_who_translates(submission, observe):
    """BLEU's test sentences are shared: each translated once, by one rank, each rank its share;
    the printed score is the corpus BLEU of them all, as the grader computes it."""
    observe_jobs(submission, observe)


def check_who_translates(obs, run):
    jobs = obs["jobs"]
    want = reference()
    for n in RANKS:
        job = jobs[str(n)]
        if job["problem"]:
            return job["problem"]
        per_rank = [rec["translated"] for rec in job["records"]]
        if sum(per_rank) != N_TEST:
            return (f"BLEU: at {ranks_text(n)} the ranks translate {per_rank} test sentences, "
                    f"{sum(per_rank)} for {N_TEST}: translate each once (a shard per rank, the "
                    f"hypotheses gathered and scored on one rank)")
        if max(per_rank) > math.ceil(N_TEST / n):
            return (f"BLEU: at {ranks_text(n)} the ranks translate {per_rank} test sentences: one "
                    f"rank translates while the others wait; give each rank its share "
                    f"(scatter_dataset(..., force_equal_length=False))")
        seen = Counter(i for rec in job["records"] for i in rec["translated_ids"])
        if seen != Counter(want["test"]):
            return (f"BLEU: at {ranks_text(n)} the ranks translate {per_rank} sentences, but not "
                    f"each test sentence once: the shards must split the test set")
        printed = [line for line in job["output"].splitlines() if "test BLEU" in line]
        if not printed:
            return (f"BLEU: at {ranks_text(n)} nothing printed 'test BLEU': keep the score")
        if len(printed) > 1:
            return (f"BLEU: at {ranks_text(n)} 'test BLEU' was printed {len(printed)} times: "
                    f"only rank 0 prints")
        try:
            got = float(printed[0].split("test BLEU")[1].split()[0])
        except (IndexError, ValueError):
            return (f"BLEU: at {ranks_text(n)} the script printed {printed[0]!r}; keep "
                    f"train_slow.py's line, 'test BLEU 12.34'")
        if abs(got - want["bleu"]) > 0.0051:
            return (f"BLEU: at {ranks_text(n)} the script printed test BLEU {got:.2f}, but the "
                    f"{N_TEST} sentences its ranks translated score {want['bleu']:.2f} together: "
                    f"corpus BLEU is not a mean over ranks nor one rank's share; gather every "
                    f"rank's hypotheses and score them once (bleu_of(..., comm))")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1], timeout=TIMEOUT)
def test_one_device_per_rank(submission, observe):
    """With --gpu (simulated on CPU), on 2 simulated nodes (in blocks and round-robin), each
    rank chooses one GPU, once: its intra_rank; and only rank 0 writes the log and snapshot."""
    observe_jobs(submission, observe, gpu=True)


def check_one_device_per_rank(obs, run):
    jobs = obs["jobs"]
    for n in RANKS[1:]:
        job = jobs[str(n)]
        if job["problem"]:
            return job["problem"]
        for rank, rec in enumerate(job["records"]):
            if rank and rec.get("writers"):
                return (f"the writers: with --gpu at {ranks_text(n)} on 2 nodes "
                        f"({GPU_HOSTS[n]}), rank {rank} (on {rec['host']}) also runs "
                        f"{', '.join(rec['writers'])}: only rank 0 writes (comm.rank == 0, not "
                        f"comm.intra_rank == 0, which is true once on every node)")
            comm = next((e for e in rec["events"] if e[0] == "communicator"), None)
            if comm is None:
                return (f"the device: rank {rank} creates no ChainerMN communicator")
            want = f"@cupy:{comm[2]}"
            gpus = [e[1] for e in rec["events"] if e[0] == "device" and e[1].startswith("@cupy")]
            wrong = sorted(set(gpus) - {want})
            if wrong or not gpus:
                return (f"the device: with --gpu at {ranks_text(n)} on 2 nodes ({GPU_HOSTS[n]}), "
                        f"rank {rank} (intra_rank {comm[2]} on {rec['host']}) chose {', '.join(gpus) or 'no GPU'}: "
                     + (f"each rank that touches {wrong[0]} makes a CUDA context there (memory "
                        f"and time on a GPU that belongs to another rank); " if wrong else "")
                     + f"choose {want} once, after the communicator (simulated on CPU)")

    return None
