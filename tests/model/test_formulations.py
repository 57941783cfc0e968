"""``formulation``: the model and optimizer each ``dlhack train --impl`` trains with. That the
fused one takes the readable one's steps is tested end to end in tests/test_train.py."""
import chainer
import pytest

from dlhack.model.formulations import IMPLS, formulation
from dlhack.model.fused import FusedSeq2seq
from dlhack.model.packed_adam import PackedAdam
from dlhack.model.seq2seq import Seq2seq


@pytest.mark.parametrize("impl", IMPLS)
def test_each_impl_gives_its_model_and_optimizer(impl):
    model, optimizer = formulation(impl, 11, 13, lr=0.01, n_units=8, n_layers=1)
    assert isinstance(model, Seq2seq) and isinstance(optimizer, chainer.optimizers.Adam)
    assert (impl == "fused") == isinstance(model, FusedSeq2seq) == isinstance(optimizer, PackedAdam)
    assert optimizer.alpha == 0.01 and model.n_units == 8


def test_an_unknown_impl_is_refused():
    with pytest.raises(ValueError, match="impl must be one of"):
        formulation("fastest", 11, 13)
