"""Which formulation of the translator trains (``dlhack train --impl``), in one place.

    model, optimizer = formulation("fused", n_src_vocab, n_tgt_vocab, n_units=256, n_layers=3)
    optimizer.setup(model)      # or wrap it first: create_multi_node_optimizer(optimizer, comm)

- ``fast``: ``Seq2seq`` with Chainer's Adam: the readable model the lessons show (the input
  projection hoisted out of the time loop, the recurrence one function per layer);
- ``nstep``: ``Seq2seq`` on Chainer's ``NStepLSTM``, with Chainer's Adam: the slow reference;
- ``fused``: ``FusedSeq2seq`` with ``PackedAdam`` (``dlhack.model.fused``): the fast sibling,
  with the same parameters, loss and gradients (the saved model is a ``Seq2seq``'s).

Costs: none beyond the model's; ``dlhack bench model`` measures each formulation.
"""
import chainer

from dlhack.model.fused import FusedSeq2seq
from dlhack.model.packed_adam import PackedAdam
from dlhack.model.seq2seq import Seq2seq

IMPLS = ("fast", "nstep", "fused")


def formulation(impl, n_src_vocab, n_tgt_vocab, lr=1e-3, **model_options):
    """``(model, optimizer)`` for ``impl`` (one of ``IMPLS``); the optimizer is not set up yet.

    Args:
        impl: ``"fast"``, ``"nstep"`` or ``"fused"``.
        n_src_vocab, n_tgt_vocab: vocabulary sizes.
        lr: Adam's alpha.
        model_options: ``n_units``, ``n_layers``, ``dropout``, ``attention`` of ``Seq2seq``.
    """
    if impl not in IMPLS:
        raise ValueError(f"impl must be one of {IMPLS}, not {impl!r}")
    if impl == "fused":
        return FusedSeq2seq(n_src_vocab, n_tgt_vocab, **model_options), PackedAdam(alpha=lr)
    model = Seq2seq(n_src_vocab, n_tgt_vocab, impl=impl, **model_options)
    return model, chainer.optimizers.Adam(alpha=lr)
