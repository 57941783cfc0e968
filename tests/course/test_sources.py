"""Facts the course states about other projects, reproduced with the installed packages.

Lab 03_convert says that ChainerMN 7.8.1's seq2seq example (examples/chainermn/seq2seq/seq2seq.py
in chainer/chainer at v7.8.1) ends with an AttributeError: it builds its BleuEvaluator as
``extensions.Evaluator.__init__(self, {'main': None}, model)``, and ``Trainer.run`` calls every
extension's ``finalize`` when training ends, which for an ``Evaluator`` calls ``finalize`` on each
of its iterators. The test below does exactly that with the installed Chainer.
"""
import inspect

import chainer
import chainer.links as L
import pytest
from chainer.training import extensions

import dlhack  # noqa: F401  (imports Chainer quietly)


def test_an_evaluator_on_no_iterator_fails_at_finalize():
    evaluator = extensions.Evaluator({"main": None}, L.Linear(2, 2))
    with pytest.raises(AttributeError, match="'NoneType' object has no attribute 'finalize'"):
        evaluator.finalize()


def test_the_trainer_finalizes_every_extension_at_its_end():
    source = inspect.getsource(chainer.training.Trainer.run)
    finally_part = source[source.index("finally:"):]
    assert "finalize = getattr(entry.extension, 'finalize', None)" in finally_part
