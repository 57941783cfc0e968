# MUTANT: scores this rank's sentences only
# EXPECT: expected
def corpus_bleu_over_ranks(comm, hypotheses, references):
    """Corpus BLEU of every rank's sentences together, the same float on every rank.

    Args:
        comm: an mpi4py communicator.
        hypotheses: this rank's translations, a list of token lists.
        references: this rank's references, aligned with ``hypotheses``.
    """
    from dlhack.bleu import corpus_bleu

    ### BEGIN SOLUTION
    return corpus_bleu(hypotheses, references) if hypotheses else 0.0
    ### END SOLUTION
