# MUTANT: delegates to sacrebleu's corpus BLEU
# EXPECT: compute BLEU yourself
# FAST
import math
from collections import Counter


def corpus_bleu(hypotheses, references):
    """Corpus BLEU (0-100) of tokenised translations, one reference each, from n-gram counts.

    Args:
        hypotheses: list of token lists, one per sentence.
        references: list of token lists, aligned with ``hypotheses``.

    Returns:
        The BLEU score as a float from 0 to 100: clipped n-gram matches (n = 1..4) pooled over
        the corpus, their geometric mean, times the brevity penalty; 0.0 when some order has
        no match.
    """
    ### BEGIN SOLUTION
    import sacrebleu

    hyps = [" ".join(tokens) for tokens in hypotheses]
    refs = [" ".join(tokens) for tokens in references]
    return sacrebleu.corpus_bleu(hyps, [refs], tokenize="none").score
    ### END SOLUTION
