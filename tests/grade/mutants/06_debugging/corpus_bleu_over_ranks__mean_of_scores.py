# MUTANT: averages the ranks' BLEU scores
# EXPECT: mean of the ranks' BLEU
# FAST
def corpus_bleu_over_ranks(comm, hypotheses, references):
    """Corpus BLEU of every rank's sentences together, the same float on every rank.

    Args:
        comm: an mpi4py communicator.
        hypotheses: this rank's translations, a list of token lists.
        references: this rank's references, aligned with ``hypotheses``.
    """
    from dlhack.bleu import corpus_bleu

    ### BEGIN SOLUTION
    scores = comm.allgather(corpus_bleu(hypotheses, references) if hypotheses else None)
    scores = [s for s in scores if s is not None]
    return sum(scores) / len(scores)
    ### END SOLUTION
