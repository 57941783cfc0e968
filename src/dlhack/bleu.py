"""Corpus BLEU on token sequences (sacrebleu, no re-tokenisation).

Both sides are already tokenised (small_parallel_enja and the embedded corpus split words with
spaces), so the tokens are joined with spaces and scored with ``tokenize="none"``: the figure is
BLEU over exactly the tokens the model sees. Corpus BLEU pools n-gram counts over every
sentence before taking the geometric mean; it is not the mean of per-sentence (or per-rank)
scores, which is why a data-parallel evaluation must gather hypotheses and score once.
"""
import sacrebleu

TOKENIZATION = "sacrebleu corpus BLEU, tokenize='none' on the corpus tokens"


def corpus_bleu(hypotheses, references):
    """Corpus BLEU (0-100) of token-list hypotheses against one token-list reference each.

    Args:
        hypotheses: list of token lists (or space-joined strings), one per sentence.
        references: list of token lists (or strings), aligned with ``hypotheses``.
    """
    if len(hypotheses) != len(references):
        raise ValueError(f"{len(hypotheses)} hypotheses but {len(references)} references")
    hyp = [h if isinstance(h, str) else " ".join(h) for h in hypotheses]
    ref = [r if isinstance(r, str) else " ".join(r) for r in references]
    return sacrebleu.corpus_bleu(hyp, [ref], tokenize="none").score
