"""Exercise 4 of lab 06: ``corpus_bleu_over_ranks(comm, hypotheses, references)``: corpus BLEU of
every rank's sentences, the same on every rank, as one process would compute it.

The points go to the value on every rank: a score that is merely the same everywhere (rank 0's
own, the largest, the mean of the ranks' or of the sentences') earns nothing. The sentences and
the shard cuts are drawn; some sentences occur twice, as real corpora have them.
"""
import numpy as np
import pytest
from lab06 import corpus_bleu, sentences, uneven_shards
from labtools import draw_seed, drawn


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


def check(submission, comm, hyps, refs, shard):
    mine_h, mine_r = shard(hyps)[comm.rank], shard(refs)[comm.rank]
    got = submission.corpus_bleu_over_ranks(comm, mine_h, mine_r)
    everyone = comm.allgather(got if isinstance(got, (float, int, type(None))) else repr(got))
    hyps_by_rank, refs_by_rank = comm.allgather(mine_h), comm.allgather(mine_r)
    want = corpus_bleu(hyps, refs)
    for rank, value in enumerate(everyone):
        if not isinstance(value, float):
            return f"rank {rank} returned {value!r}, expected the float {want:.4f} on every rank"
        if abs(value - want) > 1e-6:
            return (f"rank {rank} got {value:.4f}, expected {want:.4f} (ranks hold "
                    f"{[len(h) for h in hyps_by_rank]} sentences)"
                    + hint(value, hyps_by_rank, refs_by_rank, hyps, refs))
    return None


@pytest.mark.points(3)
@pytest.mark.mpi(ranks=[2, 3, 4], timeout=30)
def test_equals_one_process_corpus_bleu(submission, comm):
    """Every rank gets one process's corpus BLEU: 24 sentences in shards of very different
    sizes, then drawn sentences (some repeated) cut at drawn places."""
    hyps, refs = sentences()
    problem = check(submission, comm, hyps, refs, lambda items: uneven_shards(items, comm.size))
    assert problem is None, problem
    seed = draw_seed(comm)
    hyps, refs = corpus(seed)
    rng = np.random.RandomState(seed)
    bounds = cuts(list(range(len(hyps))), comm.size, rng)
    problem = check(submission, comm, hyps, refs,
                    lambda items: [[items[i] for i in part] for part in bounds])
    assert problem is None, problem + drawn(seed)
