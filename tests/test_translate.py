"""``dlhack translate`` on real input: raw text is written the way the corpus is, words the model
never saw are named, and a missing model gets one line that says how to make one."""
import subprocess
import sys
import types

import pytest

from dlhack.corpus import Vocabulary, default_corpus
from dlhack.model.seq2seq import Seq2seq
from dlhack.report import save_model
from dlhack.translate import main, tokenize, unknown_words


def test_raw_english_becomes_corpus_tokens():
    assert tokenize("Did John hate bread?") == ["did", "john", "hate", "bread", "?"]
    assert tokenize("I can't tell who'll arrive first.") == [
        "i", "can", "'t", "tell", "who", "'ll", "arrive", "first", "."]
    assert tokenize("It\u2019s fine, Ken!") == ["it", "'s", "fine", ",", "ken", "!"]
    # a quotation mark is not a contraction; numbers keep their decimal point
    assert tokenize("he said 'hi' at 3.5") == ["he", "said", "'", "hi", "'", "at", "3.5"]
    # text that is already tokenised comes back as it was
    line = "i can 't tell who will arrive first ."
    assert tokenize(line) == line.split()


def test_every_sentence_of_the_embedded_corpus_is_its_own_tokenisation(corpus):
    for en, _ in corpus.raw["train"]:
        assert tokenize(" ".join(en)) == list(en)
        assert tokenize(raw_text(en)) == list(en), raw_text(en)


def test_unknown_words_are_listed_once_in_order():
    vocab = Vocabulary(["<unk>", "<s>", "<eos>", "the", "dog"])
    assert unknown_words(["the", "cat", "dog", "cat", "sat"], vocab) == ["cat", "sat"]


@pytest.fixture(scope="module")
def corpus():
    return default_corpus(n_train=300, n_dev=10, n_test=10)


@pytest.fixture(scope="module")
def model_dir(tmp_path_factory, corpus):
    """A tiny untrained model with the embedded corpus' vocabularies: enough to check the plumbing."""
    out = tmp_path_factory.mktemp("model")
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=8, n_layers=1,
                    dropout=0.0, attention=True)
    config = types.SimpleNamespace(units=8, layers=1, attention=True)
    save_model(out, model, config, corpus.src_vocab, corpus.tgt_vocab)
    return out


def raw_text(tokens):
    """A corpus sentence as a person types it: capitalised, punctuation against the words."""
    text = " ".join(tokens).capitalize()
    for mark in (" ?", " .", " ,", " !", " '"):
        text = text.replace(mark, mark.strip())
    return text


def test_raw_and_tokenised_input_translate_alike(model_dir, corpus, capsys):
    tokens = next(en for en, _ in corpus.raw["train"] if en[-1] in ".?")
    assert main(["-m", str(model_dir), raw_text(tokens)]) == 0
    raw = capsys.readouterr()
    assert main(["-m", str(model_dir), " ".join(tokens)]) == 0
    tokenised = capsys.readouterr()
    assert raw.out == tokenised.out and raw.out.strip()
    assert raw.err == tokenised.err == ""


def test_unknown_words_are_named_on_stderr(model_dir, corpus, capsys):
    tokens = list(corpus.raw["train"][0][0])
    sentence = raw_text(["zorblax", *tokens[:-1], "qwop", "zorblax", tokens[-1]])
    assert main(["-m", str(model_dir), sentence]) == 0
    err = capsys.readouterr().err
    assert "<unk>: 'zorblax', 'qwop' (in " in err, err


def test_a_missing_model_is_one_line_naming_the_path_and_the_way_to_make_one(tmp_path):
    missing = tmp_path / "result" / "nothing"
    done = subprocess.run([sys.executable, "-m", "dlhack.cli", "translate", "-m", str(missing),
                           "hello ."], capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 1
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    assert f"no trained model at {missing}" in lines[0]
    assert "make demo" in lines[0] and "dlhack train" in lines[0]
    assert "Traceback" not in done.stderr
