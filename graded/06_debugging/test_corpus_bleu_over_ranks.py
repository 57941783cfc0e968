"""Exercise 4 of lab 06: ``corpus_bleu_over_ranks(comm, hypotheses, references)``: corpus BLEU of
every rank's sentences, the same on every rank, as one process would compute it."""
import pytest
from lab06 import corpus_bleu, sentences, uneven_shards


def run(submission, comm):
    hyps, refs = sentences()
    mine_h = uneven_shards(hyps, comm.size)[comm.rank]
    mine_r = uneven_shards(refs, comm.size)[comm.rank]
    got = submission.corpus_bleu_over_ranks(comm, mine_h, mine_r)
    per_rank = comm.allgather(corpus_bleu(mine_h, mine_r) if mine_h else None)
    return got, corpus_bleu(hyps, refs), per_rank


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[3, 4], timeout=30)
def test_equals_one_process_corpus_bleu(submission, comm):
    """24 sentences in shards of very different sizes."""
    got, want, per_rank = run(submission, comm)
    assert isinstance(got, float), f"expected a float, got {type(got).__name__}: {got!r}"
    scores = [s for s in per_rank if s is not None]
    hint = ""
    if comm.size > 1 and abs(got - sum(scores) / len(scores)) < 1e-6:
        hint = (": that is the mean of the ranks' BLEU scores; corpus BLEU adds up n-gram "
                "counts over every sentence first, so gather the sentences and score them once")
    assert got == pytest.approx(want, abs=1e-6), f"got {got:.4f}, expected {want:.4f}{hint}"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2], timeout=30)
def test_the_same_score_on_every_rank(submission, comm):
    """Every rank returns the score (not only the rank that computed it)."""
    got, _, _ = run(submission, comm)
    everyone = comm.allgather(got)
    assert len(set(everyone)) == 1, (
        f"the ranks got {everyone}: broadcast the score from the rank that computed it")
