# MUTANT: scores on rank 0 and never broadcasts
# EXPECT: expected a float
def corpus_bleu_over_ranks(comm, hypotheses, references):
    """Corpus BLEU of every rank's sentences together, the same float on every rank.

    Args:
        comm: an mpi4py communicator.
        hypotheses: this rank's translations, a list of token lists.
        references: this rank's references, aligned with ``hypotheses``.
    """
    from dlhack.bleu import corpus_bleu

    ### BEGIN SOLUTION
    pairs = comm.gather((list(hypotheses), list(references)), root=0)
    score = None
    if comm.rank == 0:
        score = corpus_bleu([h for hyps, _ in pairs for h in hyps],
                            [r for _, refs in pairs for r in refs])
    return score
    ### END SOLUTION
