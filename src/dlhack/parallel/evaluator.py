"""Evaluating on shards: combine the ranks' figures the way one process would have computed them.

    evaluator = create_multi_node_evaluator(extensions.Evaluator(dev_iter, model), comm)
    bleu = gather_corpus_bleu(hypotheses, references, comm)   # same value on every rank

Two figures, two right ways to combine them:

- A loss is a mean over samples. With exact shards of different sizes (``n = 5`` on 2 ranks:
  3 and 2 samples) the mean of the two rank means weighs each sample of the smaller shard
  more (1/4 instead of 1/5): it is not the dev-set loss. The right figure weighs each rank by
  its number of samples: ``sum(n_r * mean_r) / sum(n_r)``. ChainerMN's evaluator divides the
  sum of the rank means by ``size``, which is right only when every shard is the same size.
  The same holds within a rank: Chainer's ``Evaluator`` averages batch means, so a short last
  batch counts as much as a full one; ours weighs each batch by its number of samples.
- Corpus BLEU pools n-gram counts over every sentence before the geometric mean and the
  brevity penalty, so no average of per-rank BLEU scores (weighted or not) gives the corpus
  figure. The hypotheses and references are gathered on the root, scored once, and the score
  is broadcast.

Both use only ``rank``, ``gather_obj`` and ``bcast_obj``, so ChainerMN's communicator works too.

Cost per evaluation on ``p`` ranks, each evaluating its own ``N / p`` of ``N`` dev samples:

- ``create_multi_node_evaluator``: one gather of ``p - 1`` small pickled dicts on the root (two
  floats per reported value), then one broadcast of the means: a few hundred bytes, however
  large the dev set.
- ``gather_corpus_bleu``: one gather of every other rank's hypotheses and references, about
  ``(p - 1) / p`` of the dev set's tokens into the root, then one broadcast of one float. It
  grows with the dev set, so it is for evaluation, not for every training step.

Lesson: "Evaluating in parallel".
"""
import copy
import types

import chainer

from dlhack.bleu import corpus_bleu


def gather_corpus_bleu(hypotheses, references, comm, root=0):
    """Corpus BLEU over every rank's sentences, the same float on every rank.

    Args:
        hypotheses: this rank's token-list hypotheses.
        references: this rank's token-list references, aligned with ``hypotheses``.
        comm: our communicator or ChainerMN's.
        root: the rank that scores.
    """
    pairs = comm.gather_obj((list(hypotheses), list(references)), root=root)
    score = None
    if comm.rank == root:  # concatenated in rank order; corpus BLEU ignores the order anyway
        score = corpus_bleu([h for hyps, _ in pairs for h in hyps],
                            [r for _, refs in pairs for r in refs])
    return comm.bcast_obj(score, root=root)


def merge_weighted_sums(per_rank):
    """Combine ``[{name: (weighted_sum, weight)}, ...]`` into ``{name: weighted mean}``."""
    totals = {}
    for sums in per_rank:
        for name, (total, weight) in sums.items():
            acc = totals.setdefault(name, [0.0, 0.0])
            acc[0] += total
            acc[1] += weight
    return {name: total / weight for name, (total, weight) in sorted(totals.items()) if weight}


def _local_weighted_sums(evaluator, weight):
    """Run ``evaluator``'s loop over this rank's batches: ``{name: (sum of w * value, sum of w)}``.

    The same loop as ``chainer.training.extensions.Evaluator.evaluate``, except that each
    observed value is weighted by ``weight(batch)`` instead of counting every batch as one.
    """
    iterator = evaluator.get_iterator("main")
    eval_func = evaluator.eval_func or evaluator.get_target("main")
    if evaluator.eval_hook:
        evaluator.eval_hook(evaluator)
    if hasattr(iterator, "reset"):
        iterator.reset()
        it = iterator
    else:
        it = copy.copy(iterator)

    sums = {}
    for batch in it:
        observation = {}
        with chainer.reporter.report_scope(observation):
            in_arrays = evaluator.converter(batch, evaluator.device)
            with chainer.no_backprop_mode():
                if isinstance(in_arrays, tuple):
                    eval_func(*in_arrays)
                elif isinstance(in_arrays, dict):
                    eval_func(**in_arrays)
                else:
                    eval_func(in_arrays)
        w = float(weight(batch))
        for name, value in observation.items():
            value = float(chainer.backend.CpuDevice().send(getattr(value, "array", value)))
            acc = sums.setdefault(name, [0.0, 0.0])
            acc[0] += w * value
            acc[1] += w
    return sums


def create_multi_node_evaluator(evaluator, comm, weight=len):
    """Make a Chainer ``Evaluator`` report sample-weighted means over every rank's shard.

    Its ``evaluate`` is replaced: each rank sums ``weight(batch) * value`` over its batches,
    the root adds up every rank's sums and weights, and every rank returns the same means.

    Args:
        evaluator: a ``chainer.training.extensions.Evaluator`` over this rank's shard.
        comm: our communicator or ChainerMN's.
        weight: how many samples a batch counts for. ``len`` suits a loss averaged over the
            batch's examples; pass a token counter for a loss averaged over tokens.

    Returns:
        ``evaluator`` itself, patched.
    """

    def evaluate(self):
        per_rank = comm.gather_obj(_local_weighted_sums(self, weight), root=0)
        means = merge_weighted_sums(per_rank) if comm.rank == 0 else None
        return comm.bcast_obj(means, root=0)

    evaluator.evaluate = types.MethodType(evaluate, evaluator)
    return evaluator
