# MUTANT: the mean of per-sentence BLEU, not corpus BLEU
# EXPECT: mean of sentence BLEU
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
    scores = []
    for hyp, ref in zip(hypotheses, references):
        matches, totals = [0] * 4, [0] * 4
        for n in range(1, 5):
            hyp_grams = Counter(tuple(hyp[i:i + n]) for i in range(len(hyp) - n + 1))
            ref_grams = Counter(tuple(ref[i:i + n]) for i in range(len(ref) - n + 1))
            matches[n - 1] += sum(min(k, ref_grams[g]) for g, k in hyp_grams.items())
            totals[n - 1] += sum(hyp_grams.values())
        if not hyp or min(matches) == 0:
            scores.append(0.0)
            continue
        log_precision = sum(math.log(m / t) for m, t in zip(matches, totals)) / 4
        scores.append(100 * min(1.0, math.exp(1 - len(ref) / len(hyp))) * math.exp(log_precision))
    return sum(scores) / len(scores)
    ### END SOLUTION
