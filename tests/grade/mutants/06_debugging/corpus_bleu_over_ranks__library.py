# MUTANT: delegates to the library's data-parallel BLEU
# EXPECT: write yourself
def corpus_bleu_over_ranks(comm, hypotheses, references):
    """Corpus BLEU of every rank's sentences together, the same float on every rank.

    Args:
        comm: an mpi4py communicator.
        hypotheses: this rank's translations, a list of token lists.
        references: this rank's references, aligned with ``hypotheses``.
    """
    from dlhack.bleu import corpus_bleu

    ### BEGIN SOLUTION
    from dlhack.parallel.evaluator import gather_corpus_bleu
    from dlhack.parallel.communicator import Communicator

    return gather_corpus_bleu(hypotheses, references, Communicator(comm))
    ### END SOLUTION
