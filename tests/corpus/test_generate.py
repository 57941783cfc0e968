"""The embedded corpus (dlhack.corpus.generate): determinism, disjoint splits, sizes, lengths, files."""
from collections import Counter

import pytest

from dlhack.corpus import generate as data
from dlhack.corpus import sentences


@pytest.fixture(scope="module")
def corpus():
    return data.generate()  # the default corpus the demo trains on


def types(pairs, side):
    return Counter(w for pair in pairs for w in pair[side].split())


def test_same_seed_gives_the_same_corpus():
    first = data.generate(n_train=1000, n_dev=50, n_test=50, seed=3)
    again = data.generate(n_train=1000, n_dev=50, n_test=50, seed=3)
    other = data.generate(n_train=1000, n_dev=50, n_test=50, seed=4)
    assert first == again
    assert first["train"] != other["train"]
    assert [len(first[s]) for s in ("train", "dev", "test")] == [1000, 50, 50]


def test_default_sizes_and_pairs_are_token_strings(corpus):
    assert [len(corpus[s]) for s in ("train", "dev", "test")] == [20000, 500, 500]
    for en, ja in corpus["dev"]:
        assert en == en.lower() and en.split() == en.split(" "), en
        assert ja.split() == ja.split(" "), ja  # single spaces, no leading/trailing blanks
        assert en[-1] in ".?" and ja[-1] in "。？", (en, ja)


def test_no_dev_or_test_sentence_is_in_train(corpus):
    train_en = {en for en, _ in corpus["train"]}
    train_pairs = set(corpus["train"])
    for split in ("dev", "test"):
        assert not train_pairs & set(corpus[split])
        assert not train_en & {en for en, _ in corpus[split]}
    assert not {en for en, _ in corpus["dev"]} & {en for en, _ in corpus["test"]}


def test_at_least_300_word_types_per_side(corpus):
    en, ja = types(corpus["train"], 0), types(corpus["train"], 1)
    assert len(en) >= 300 and len(ja) >= 300, (len(en), len(ja))


def test_sentence_lengths_span_3_to_20_tokens(corpus):
    for side in (0, 1):
        lengths = [len(pair[side].split()) for pair in corpus["train"]]
        assert min(lengths) >= 3 and max(lengths) <= 20
        assert min(lengths) <= 4 and max(lengths) >= 16  # short and long sentences both occur


def test_generation_is_fast():
    import time

    start = time.process_time()  # CPU time: other jobs on the machine do not count
    data.generate()
    assert time.process_time() - start < 1.5


def test_particles_and_question_endings_occur(corpus):
    ja = types(corpus["train"], 1)
    for particle in ("は", "が", "を", "に", "で", "と", "の", "から", "まで"):
        assert ja[particle] >= 50, particle
    for en, ja in corpus["train"][:2000]:
        assert en.endswith("?") == ja.endswith("か ？"), (en, ja)


def test_write_corpus_round_trip(tmp_path):
    out = data.write_corpus(tmp_path / "c", seed=1, n_train=300, n_dev=20, n_test=30)
    expected = data.generate(n_train=300, n_dev=20, n_test=30, seed=1)
    for split, pairs in expected.items():
        for side, lang in enumerate(("en", "ja")):
            text = (out / f"{split}.{lang}").read_text(encoding="utf-8")
            assert text.endswith("\n")
            assert text.splitlines() == [pair[side] for pair in pairs]


def test_cli_writes_the_six_files(tmp_path, capsys):
    from dlhack.cli import main

    assert main(["data", "make", str(tmp_path), "--seed", "2", "--train", "200", "-d", "10",
                 "--test", "10"]) == 0
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == ["dev.en", "dev.ja", "test.en", "test.ja", "train.en", "train.ja"]
    assert len((tmp_path / "train.ja").read_text(encoding="utf-8").splitlines()) == 200
    out = capsys.readouterr().out
    assert "200 pairs" in out and "word types" in out


def test_sample_is_still_importable_from_generate():
    assert data.sample is sentences.sample
