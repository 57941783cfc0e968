"""What rank 0 writes for a training run (dlhack.report): the model and its vocabularies saved and
loaded back whole, and the loss/BLEU plot, also for a run too short to have logged anything."""
import types

import numpy as np

from dlhack.corpus import default_corpus
from dlhack.model.seq2seq import Seq2seq
from dlhack.report import load_model, plot_log, save_model

PNG = b"\x89PNG\r\n\x1a\n"


def test_a_saved_model_loads_back_with_its_vocabularies(tmp_path):
    corpus = default_corpus(n_train=200, n_dev=5, n_test=5)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=8, n_layers=2,
                    dropout=0.0, attention=False)
    config = types.SimpleNamespace(units=8, layers=2, attention=False)
    save_model(tmp_path, model, config, corpus.src_vocab, corpus.tgt_vocab)
    loaded, src_vocab, tgt_vocab = load_model(tmp_path / "model.npz")
    assert (src_vocab.words, tgt_vocab.words) == (corpus.src_vocab.words, corpus.tgt_vocab.words)
    want = dict(model.namedparams())
    got = dict(loaded.namedparams())
    assert sorted(got) == sorted(want)
    for name, param in want.items():
        np.testing.assert_array_equal(got[name].array, param.array, err_msg=name)
    sources = [src for src, _ in corpus.dev[:3]]
    assert [y.tolist() for y in loaded.translate(sources)] == \
        [y.tolist() for y in model.translate(sources)]


def test_the_plot_is_written_with_or_without_a_log(tmp_path):
    log = [{"epoch": 1, "main/loss": 3.0, "validation/main/loss": 3.2, "validation/bleu": 4.0},
           {"epoch": 2, "main/loss": 2.0, "validation/main/loss": 2.5, "validation/bleu": 9.0}]
    plot_log(log, tmp_path / "training.png")
    plot_log([], tmp_path / "empty.png")
    for name in ("training.png", "empty.png"):
        assert (tmp_path / name).read_bytes()[:8] == PNG
