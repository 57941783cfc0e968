"""Loading Chainer's own seq2seq example by path, without its BLEU and progress-bar packages."""
import sys

import pytest

from dlhack.bench.official import load_example, placeholders

FAKE_EXAMPLE = '''
from nltk.translate import bleu_score
import progressbar
import chainer


class Seq2seq(chainer.Chain):
    def __init__(self, n_layers, n_source_vocab, n_target_vocab, n_units):
        super().__init__()
        self.sizes = (n_layers, n_source_vocab, n_target_vocab, n_units)
'''


def test_example_loads_with_placeholders_that_leave_no_trace(tmp_path):
    path = tmp_path / "seq2seq.py"
    path.write_text(FAKE_EXAMPLE)
    before = set(sys.modules)
    module = load_example(path)
    assert module.Seq2seq(3, 10, 11, 4).sizes == (3, 10, 11, 4)
    assert not {"nltk", "progressbar"} & (set(sys.modules) - before)


def test_placeholders_leave_real_packages_alone():
    with placeholders(("json", "dlhack_no_such_package.sub")) as added:
        assert added == ["dlhack_no_such_package.sub"]
        assert "json" in sys.modules
    assert "dlhack_no_such_package.sub" not in sys.modules


def test_a_file_without_the_model_is_refused(tmp_path):
    path = tmp_path / "other.py"
    path.write_text("x = 1\n")
    with pytest.raises(ValueError):
        load_example(path)
