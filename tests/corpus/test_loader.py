"""The corpus loader (dlhack.corpus): vocabularies, clear errors on bad files, the real corpus."""
import numpy as np
import pytest

from dlhack.corpus import (
    Corpus,
    CorpusError,
    Vocabulary,
    default_corpus,
    load_corpus,
    load_pair,
    read_lines,
    read_parallel,
)


def write(path, text):
    path.write_bytes(text.encode("utf-8") if isinstance(text, str) else text)
    return path


@pytest.fixture
def tiny(tmp_path):
    """A three-split corpus directory of a few lines."""
    for split, n in (("train", 4), ("dev", 2), ("test", 2)):
        write(tmp_path / f"{split}.en", "".join(f"the dog ate {i} apples .\n" for i in range(n)))
        write(tmp_path / f"{split}.ja", "".join(f"犬 は りんご を {i} つ 食べ た 。\n"
                                                for i in range(n)))
    return tmp_path


# --- vocabulary ------------------------------------------------------------------------------

def test_vocabulary_orders_by_frequency_then_alphabet():
    vocab = Vocabulary.build([["b", "a", "c"], ["c", "b"], ["c", "d"]])
    assert vocab.words == ["<unk>", "<s>", "<eos>", "c", "b", "a", "d"]
    assert (Vocabulary.UNK, Vocabulary.BOS, Vocabulary.EOS) == (0, 1, 2)
    assert vocab.ids["c"] == 3 and len(vocab) == 7 and "d" in vocab and "z" not in vocab
    # the same sentences in another order give the same ids
    again = Vocabulary.build([["c", "d"], ["c", "b"], ["b", "a", "c"]])
    assert again.words == vocab.words


def test_vocabulary_cap_and_min_freq():
    sentences = [["x"] * 5 + ["y"] * 3 + ["z"]]
    assert Vocabulary.build(sentences, max_size=5).words[3:] == ["x", "y"]
    assert Vocabulary.build(sentences, min_freq=3).words[3:] == ["x", "y"]


def test_encode_decode_round_trip():
    vocab = Vocabulary.build([["the", "dog", "ate", "."]])
    ids = vocab.encode(["the", "cat", "ate", "."])
    assert ids.dtype == np.int32 and ids.tolist() == [vocab.ids["the"], 0, vocab.ids["ate"],
                                                      vocab.ids["."]]
    assert vocab.decode(ids) == ["the", "<unk>", "ate", "."]
    # decode skips <s> and stops at <eos>
    with_marks = [Vocabulary.BOS, *vocab.encode(["dog", "."]), Vocabulary.EOS, vocab.ids["the"]]
    assert vocab.decode(np.array(with_marks)) == ["dog", "."]


def test_save_load_round_trip(tmp_path):
    vocab = Vocabulary.build([["猫", "は", "寝"], ["猫", "。"]])
    vocab.save(tmp_path / "v.txt")
    assert Vocabulary.load(tmp_path / "v.txt").words == vocab.words


def test_load_vocab_file_with_slash_s(tmp_path):
    path = write(tmp_path / "train.en.vocab", "<unk>\n<s>\n</s>\n.\nthe\n")
    vocab = Vocabulary.load(path)
    assert vocab.words == ["<unk>", "<s>", "<eos>", ".", "the"]
    assert vocab.decode([vocab.ids["the"], 2, 3]) == ["the"]


def test_load_plain_word_list_gets_specials(tmp_path):
    vocab = Vocabulary.load(write(tmp_path / "words", "dog\ncat\n"))
    assert vocab.words == ["<unk>", "<s>", "<eos>", "dog", "cat"]


def test_load_vocab_with_a_repeated_word_names_the_line(tmp_path):
    with pytest.raises(CorpusError, match=r"line 5 repeats 'dog' \(already on line 4\)"):
        Vocabulary.load(write(tmp_path / "v", "<unk>\n<s>\n</s>\ndog\ndog\n"))


# --- bad files: one test per kind, each message names the file and the line -------------------

def test_different_line_counts(tmp_path):
    src = write(tmp_path / "a.en", "one .\ntwo .\nthree .\n")
    tgt = write(tmp_path / "a.ja", "一 。\n二 。\n")
    with pytest.raises(CorpusError) as err:
        read_parallel(src, tgt)
    message = str(err.value)
    assert str(src) in message and str(tgt) in message
    assert "3 lines" in message and "has 2" in message and "line 3" in message


def test_empty_file(tmp_path):
    path = write(tmp_path / "train.en", "")
    with pytest.raises(CorpusError, match="train.en: the file is empty"):
        read_lines(path)


def test_empty_line(tmp_path):
    path = write(tmp_path / "train.ja", "猫 が いる 。\n\n犬 も いる 。\n")
    with pytest.raises(CorpusError, match=r"train.ja: line 2 is empty"):
        read_lines(path)


def test_line_that_is_not_utf8(tmp_path):
    path = write(tmp_path / "train.ja", "猫 が いる 。\n".encode() + b"ab \xff\xfe cd\n")
    with pytest.raises(CorpusError) as err:
        read_lines(path)
    message = str(err.value)
    assert "train.ja: line 2 is not valid UTF-8" in message
    first_line = len("猫 が いる 。\n".encode())
    assert "byte 3 of the line" in message and f"{first_line + 3} of the file" in message


def test_missing_split_names_the_path_and_lists_the_directory(tiny):
    (tiny / "dev.ja").unlink()
    with pytest.raises(CorpusError) as err:
        load_corpus(tiny)
    message = str(err.value)
    assert str(tiny / "dev.ja") in message
    assert "dev.en, test.en, test.ja, train.en, train.ja" in message


def test_missing_directory(tmp_path):
    with pytest.raises(CorpusError, match="no such corpus directory"):
        load_corpus(tmp_path / "nowhere")


# --- loading -------------------------------------------------------------------------------

def test_load_corpus_ids_and_raw(tiny):
    corpus = load_corpus(tiny)
    assert isinstance(corpus, Corpus)
    assert [len(corpus.train), len(corpus.dev), len(corpus.test)] == [4, 2, 2]
    src_ids, tgt_ids = corpus.train[1]
    assert src_ids.dtype == np.int32 and tgt_ids.dtype == np.int32
    assert corpus.src_vocab.decode(src_ids) == corpus.raw["train"][1][0] == \
        ["the", "dog", "ate", "1", "apples", "."]
    assert corpus.tgt_vocab.decode(tgt_ids) == ["犬", "は", "りんご", "を", "1", "つ", "食べ", "た", "。"]
    # dev words missing from train are unknown; no <s>/<eos> is added
    assert corpus.tgt_vocab.decode(corpus.dev[0][1]) == ["犬", "は", "りんご", "を", "0", "つ", "食べ", "た", "。"]
    assert Vocabulary.BOS not in corpus.train[0][0] and Vocabulary.EOS not in corpus.train[0][0]


def test_load_corpus_with_vocab_size_and_vocab_files(tiny):
    capped = load_corpus(tiny, vocab_size=6)
    assert len(capped.src_vocab) == 6
    Vocabulary.build([["dog", "."]]).save(tiny / "my.vocab")
    given = load_corpus(tiny, splits=("dev",), src_vocab=tiny / "my.vocab",
                        tgt_vocab=capped.tgt_vocab)
    assert given.src_vocab.words[3:] == [".", "dog"] and given.tgt_vocab is capped.tgt_vocab
    assert list(given.splits) == ["dev"]
    with pytest.raises(KeyError, match="no 'train' split"):
        _ = given.train


def test_load_pair(tiny):
    corpus = load_pair(tiny / "train.en", tiny / "train.ja")
    assert list(corpus.splits) == ["train"] and len(corpus.train) == 4


def test_default_corpus_shapes():
    corpus = default_corpus(seed=0, n_train=500, n_dev=20, n_test=30)
    assert [len(corpus.train), len(corpus.dev), len(corpus.test)] == [500, 20, 30]
    assert len(corpus.src_vocab) > 100 and len(corpus.tgt_vocab) > 100
    for src, tgt in corpus.train[:50]:
        assert src.dtype == np.int32 and tgt.dtype == np.int32 and src.ndim == tgt.ndim == 1
        assert src.min() > Vocabulary.EOS and tgt.min() > Vocabulary.EOS  # every train word known
    _, ja = corpus.raw["test"][0]
    assert corpus.tgt_vocab.decode(corpus.test[0][1]) == [
        w if w in corpus.tgt_vocab else "<unk>" for w in ja]


# --- the real corpus, when ../shared/data/small_parallel_enja is there --------------------------

def test_small_parallel_enja(enja_dir):
    corpus = load_corpus(enja_dir, vocab_size=4096)
    assert [len(corpus.train), len(corpus.dev), len(corpus.test)] == [50000, 500, 500]
    assert corpus.raw["train"][0][0][-1] == "."
    vocab = Vocabulary.load(enja_dir / "train.en.vocab.4k")
    assert len(vocab) == 4096 and vocab.words[:4] == ["<unk>", "<s>", "<eos>", "."]
    # a vocabulary built from train with the same cap is almost the same list of words
    assert len(corpus.src_vocab) == 4096
    assert len(set(corpus.src_vocab.words) & set(vocab.words)) > 4000


@pytest.mark.parametrize("source", ["embedded", "files"])
def test_each_word_is_one_string_in_memory(source, tiny):
    """Tokens are interned: a corpus kept as tokens costs a pointer per token."""
    corpus = (default_corpus(seed=0, n_train=200, n_dev=5, n_test=5) if source == "embedded"
              else load_corpus(tiny, splits=("train",)))
    tokens = [w for en, ja in corpus.raw["train"] for w in en + ja]
    assert len({id(w) for w in tokens}) == len(set(tokens)) < len(tokens)
