"""Stand-in translations for 05_bleu_mean_*.py: references with words dropped or replaced.

No translator is trained here: what a half-trained model might output is imitated, with more
mistakes further down the list (as if later sentences were harder), so ranks' shards differ.
"""
import numpy as np

from dlhack.corpus import default_corpus


def hypotheses_and_references(n=40, seed=0):
    """``n`` (hypothesis, reference) token lists; the same on every rank (seeded)."""
    refs = [tgt for _, tgt in default_corpus(seed=seed, n_train=50, n_dev=n, n_test=1).raw["dev"]]
    rng = np.random.RandomState(seed)
    hyps = []
    for i, ref in enumerate(refs):
        wrong = rng.uniform(size=len(ref)) < 0.6 * i / n  # sentence i: about 0.6 i/n wrong
        hyp = [w if not bad else "の" for w, bad in zip(ref, wrong)]
        hyps.append(hyp[:len(hyp) - i % 3])  # and some too short: the brevity penalty
    return hyps, refs
