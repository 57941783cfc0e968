# MUTANT: averages the ranks' scores weighted by their sentence counts
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
    pairs = comm.allgather((len(hypotheses), corpus_bleu(hypotheses, references) if hypotheses else 0.0))
    return sum(n * s for n, s in pairs) / sum(n for n, _ in pairs)
    ### END SOLUTION
