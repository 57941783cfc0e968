"""Stand-in translations for 05_bleu_mean_*.py: references with words left out or added.

No translator is trained here: what a half-trained model might output is imitated. Sentences
further down the list lose more words (as if they were harder), and the first half gets one word
too many, so that the ranks' shards differ in quality and in length, as real shards can.
"""
import numpy as np

from dlhack.corpus import default_corpus


def hypotheses_and_references(n=40, seed=0):
    """``n`` (hypothesis, reference) token lists; the same on every rank (seeded)."""
    refs = [tgt for _, tgt in default_corpus(seed=seed, n_train=50, n_dev=n, n_test=1).raw["dev"]]
    rng = np.random.RandomState(seed)
    hyps = []
    for i, ref in enumerate(refs):
        dropped = rng.uniform(size=len(ref)) < 0.5 * i / n  # sentence i loses about i/2n
        hyp = [word for word, lost in zip(ref, dropped) if not lost]
        hyps.append(hyp + ["です"] if i < n // 2 else hyp)
    return hyps, refs
