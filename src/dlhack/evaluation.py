"""Translation quality during and after training: greedy translation and corpus BLEU.

In data-parallel training each rank translates only its shard; ``BleuEvaluator`` then gathers
every rank's hypotheses to the root and scores them once (``dlhack.parallel``'s
``gather_corpus_bleu``), because corpus BLEU is not the mean of per-rank BLEU.
"""
import chainer

from dlhack.bleu import corpus_bleu


def translate_ids(model, sources, batchsize=128, max_length=50):
    """Greedy translations (id arrays) of a list of source id arrays, in order."""
    device = model.device
    out = []
    for i in range(0, len(sources), batchsize):
        out += model.translate([device.send(x) for x in sources[i:i + batchsize]],
                               max_length=max_length)
    return out


def translate_sentences(model, sentences, src_vocab, tgt_vocab, **kwargs):
    """Translate tokenised sentences (strings or token lists) -> list of token lists."""
    tokens = [s.split() if isinstance(s, str) else s for s in sentences]
    ids = translate_ids(model, [src_vocab.encode(t) for t in tokens], **kwargs)
    return [tgt_vocab.decode(y) for y in ids]


def bleu_of(model, examples, tgt_vocab, comm=None, batchsize=128, max_length=50):
    """Corpus BLEU of greedy translations of ``examples`` (this rank's shard).

    Args:
        examples: list of ((src_ids, tgt_ids), reference_tokens).
        comm: the communicator of data-parallel evaluation: every rank must call this, and
            every rank gets the same score, computed once on the gathered hypotheses.
            ``None``: score this process's examples alone, no communicator needed.
    """
    hyps = translate_ids(model, [pair[0] for pair, _ in examples], batchsize, max_length)
    hyps = [tgt_vocab.decode(y) for y in hyps]
    refs = [ref for _, ref in examples]
    if comm is None:  # a notebook or script scoring on its own
        return corpus_bleu(hyps, refs)
    from dlhack.parallel import gather_corpus_bleu

    return gather_corpus_bleu(hyps, refs, comm)


class BleuEvaluator(chainer.training.Extension):
    """Trainer extension: report corpus BLEU of ``examples`` as ``key``.
    """

    trigger = 1, "epoch"
    priority = chainer.training.PRIORITY_WRITER

    def __init__(self, model, examples, tgt_vocab, comm=None, key="validation/bleu",
                 batchsize=128, max_length=50):
        self.model, self.examples, self.tgt_vocab, self.comm = model, examples, tgt_vocab, comm
        self.key, self.batchsize, self.max_length = key, batchsize, max_length

    def __call__(self, trainer=None):
        bleu = bleu_of(self.model, self.examples, self.tgt_vocab, self.comm,
                       self.batchsize, self.max_length)
        chainer.report({self.key: bleu})
        return bleu


def samples(model, examples, src_vocab, tgt_vocab):
    """Source, reference and the model's translation of each ``((src, tgt), reference)``."""
    sources = [pair[0] for pair, _ in examples]
    return [{"source": " ".join(src_vocab.decode(x)), "reference": " ".join(ref),
             "translation": " ".join(tgt_vocab.decode(y))}
            for x, (_, ref), y in zip(sources, examples, translate_ids(model, sources))]
