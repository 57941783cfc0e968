# MUTANT: counts every matching n-gram, however often the reference has it
# EXPECT: not clipped
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
    matches, totals = [0] * 4, [0] * 4
    for hyp, ref in zip(hypotheses, references):
        for n in range(1, 5):
            hyp_grams = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
            ref_grams = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            matches[n - 1] += sum(k for g, k in hyp_grams.items() if g in ref_grams)
            totals[n - 1] += sum(hyp_grams.values())
    c = sum(len(h) for h in hypotheses)
    r = sum(len(ref) for ref in references)
    if c == 0 or min(matches) == 0:
        return 0.0
    log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / 4
    brevity = min(1.0, math.exp(1 - r / c))
    return 100 * brevity * math.exp(log_precision)
    ### END SOLUTION
