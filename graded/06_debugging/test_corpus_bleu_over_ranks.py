"""Exercise 4 of lab 06: ``corpus_bleu_over_ranks(comm, hypotheses, references)``: corpus BLEU of
every rank's sentences, the same on every rank, as one process would compute it.

The points go to the value on every rank: a score that is merely the same everywhere (rank 0's
own, the largest, the mean of the ranks' or of the sentences') earns nothing. The sentences and
the shard cuts are drawn; some sentences occur twice, as real corpora have them.
"""
import numpy as np
import pytest
from lab06 import corpus_bleu, sentences, uneven_shards
from labtools import drawn


def corpus(seed):
    """Sentences of varying quality with a few repeated (hypothesis, reference) pairs."""
    hyps, refs = sentences(n=20, seed=seed % 1000)
    rng = np.random.RandomState(seed)
    again = rng.choice(len(hyps), 4, replace=False)
    return hyps + [hyps[i] for i in again], refs + [refs[i] for i in again]


def cuts(items, size, rng):
    """Contiguous shards at drawn cut points (some may be empty)."""
    bounds = [0, *sorted(int(c) for c in rng.randint(0, len(items) + 1, size - 1)), len(items)]
    return [items[bounds[r]:bounds[r + 1]] for r in range(size)]


def hint(got, hyps_by_rank, refs_by_rank, hyps, refs):
    scores = [corpus_bleu(h, r) for h, r in zip(hyps_by_rank, refs_by_rank) if h]
    unique = dict.fromkeys((tuple(h), tuple(r)) for h, r in zip(hyps, refs))
    deduplicated = corpus_bleu([list(h) for h, _ in unique], [list(r) for _, r in unique])
    if len(unique) < len(hyps) and abs(got - deduplicated) < 1e-6:
        return (": that leaves out repeated sentences; a sentence that occurs twice in the "
                "corpus counts twice")
    if len(scores) > 1 and abs(got - sum(scores) / len(scores)) < 1e-6:
        return (": that is the mean of the ranks' BLEU scores; corpus BLEU adds up n-gram "
                "counts over every sentence first, so gather the sentences and score them once")
    if any(abs(got - score) < 1e-6 for score in scores):
        return (": that is one rank's own BLEU (its sentences only); gather every rank's "
                "sentences and score them together")
    each = [corpus_bleu([h], [r]) for h, r in zip(hyps, refs)]
    if abs(got - sum(each) / len(each)) < 1e-6:
        return (": that is the mean of per-sentence BLEU; corpus BLEU pools the n-gram counts "
                "of every sentence, then scores once")
    return ""


def problem_with(values, hyps_by_rank, refs_by_rank):
    """None, or what is wrong with the first rank's value (``values[rank]``)."""
    hyps = [h for part in hyps_by_rank for h in part]
    refs = [r for part in refs_by_rank for r in part]
    want = corpus_bleu(hyps, refs)
    for rank, value in enumerate(values):
        if not isinstance(value, float):
            return f"rank {rank} returned {value!r}, expected a float ({want:.4f}) on every rank"
        if abs(value - want) > 1e-6:
            return (f"rank {rank} got {value:.4f}, expected {want:.4f} (ranks hold "
                    f"{[len(h) for h in hyps_by_rank]} sentences)"
                    + hint(value, hyps_by_rank, refs_by_rank, hyps, refs))
    return None


def cases(seed, size):
    """(hypotheses by rank, references by rank): 24 sentences in shards of very different sizes;
    then drawn sentences (some repeated) cut at drawn places."""
    hyps, refs = sentences()
    out = [(uneven_shards(hyps, size), uneven_shards(refs, size))]
    hyps, refs = corpus(seed)
    parts = cuts(list(range(len(hyps))), size, np.random.RandomState(seed))
    out.append(([[hyps[i] for i in p] for p in parts], [[refs[i] for i in p] for p in parts]))
    return out


def as_value(got):
    if isinstance(got, np.floating):
        return float(got)
    return got if isinstance(got, (float, int, type(None))) else repr(got)


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[2, 3, 4], timeout=30)
def test_equals_one_process_corpus_bleu(submission, comm, observe, seed):
    """Every rank gets one process's corpus BLEU: 24 sentences in shards of very different
    sizes, then drawn sentences (some repeated) cut at drawn places."""
    got = []
    for hyps, refs in cases(seed, comm.size):
        got.append(as_value(submission.corpus_bleu_over_ranks(comm, hyps[comm.rank],
                                                               refs[comm.rank])))
        observe(got=got)


def check_equals_one_process_corpus_bleu(obs, run):
    everyone = [run.observed(r)["got"] for r in range(run.size)]
    for i, (hyps, refs) in enumerate(cases(run.seed, run.size)):
        problem = problem_with([got[i] for got in everyone], hyps, refs)
        if problem:
            return problem + (drawn(run.seed) if i else "")
    return None
