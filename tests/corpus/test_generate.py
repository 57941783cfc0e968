"""The embedded corpus (dlhack.corpus.generate): determinism, disjoint splits, size, and real reordering."""
import random
import re
from collections import Counter

import pytest

from dlhack.corpus import generate as data
from dlhack.corpus import inflection, sentences
from dlhack.corpus.inflection import ja_plain, ja_polite_question
from dlhack.corpus.phrases import LEX


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


@pytest.fixture(scope="module")
def samples():
    """60,000 draws from the grammar (with repeats), as english -> japanese."""
    rng, seen = random.Random(11), {}
    for _ in range(60000):
        en, ja = data.sample(rng)
        assert seen.setdefault(en, ja) == ja, (en, seen[en], ja)
    return seen


def test_each_english_sentence_has_one_japanese_rendering(samples):
    # the fixture asserts it draw by draw; here: the grammar is far from exhausted
    assert len(samples) > 50000


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


def simple_svo(samples):
    """Pairs like "tom ate the apple ." with the Japanese we expect from the word lists."""
    subjects = dict(LEX.names) | {p[0]: p[3] for p in LEX.pronouns.values()}
    verbs = {v.en.past: v for v in LEX.transitive if v.particle == "を" and "P" not in v.flags
             and v.en.past != v.en.base}  # "read": present or past
    nouns = {n.en: n for n in LEX.nouns.values() if n.art == "a" and "@" not in n.tags}
    pattern = re.compile(r"(\w+) (\w+) (the|a|an) (\w+) \.")
    for en, ja in samples.items():
        m = pattern.fullmatch(en)
        if m and m[1] in subjects and m[2] in verbs and m[4] in nouns:
            yield en, ja, subjects[m[1]], verbs[m[2]], nouns[m[4]]


def test_subject_object_verb_order_with_particles(samples):
    found = list(simple_svo(samples))
    assert len(found) >= 20
    for en, ja, subj, verb, obj in found:
        assert ja == f"{subj} は {obj.ja} を {verb.ja['ta']} 。", en
        tokens, verb_tokens = ja.split(), verb.ja["ta"].split()
        # the object comes first, marked by を, and the verb closes the sentence
        assert tokens[-1 - len(verb_tokens):-1] == verb_tokens
        assert tokens.index(obj.ja.split()[-1]) < tokens.index("を") < len(tokens) - len(verb_tokens)


def test_particles_and_question_endings_occur(corpus):
    ja = types(corpus["train"], 1)
    for particle in ("は", "が", "を", "に", "で", "と", "の", "から", "まで"):
        assert ja[particle] >= 50, particle
    for en, ja in corpus["train"][:2000]:
        assert en.endswith("?") == ja.endswith("か ？"), (en, ja)


def test_numerals_float_after_the_object(samples):
    numbers = dict(LEX.numbers)
    verbs = {v.en.past: v for v in LEX.transitive if v.particle == "を" and v.en.past != v.en.base}
    plurals = {n.pl: n for n in LEX.nouns.values() if n.art == "a" and n.ctr}
    pattern = re.compile(r".* (\w+) (two|three|four|five|six|seven|eight|nine) (\w+) \.")
    seen = 0
    for en, ja in samples.items():
        m = pattern.fullmatch(en)
        if m and m[1] in verbs and m[3] in plurals and m[1] != "played":  # played: する or 弾く
            noun, verb = plurals[m[3]], verbs[m[1]]
            # "ate three apples ." -> "りんご を 三 つ 食べ た 。"
            assert ja.endswith(f"{noun.ja} を {numbers[m[2]]} {noun.ctr} {verb.ja['ta']} 。"), en
            seen += 1
    assert seen >= 20


def test_tense_negation_and_politeness_inflect_the_verb():
    eat = next(v for v in LEX.transitive if v.en.base == "eat").ja
    assert ja_plain(eat, "past", False) == "食べ た"
    assert ja_plain(eat, "past", True) == "食べ な かっ た"
    assert ja_plain(eat, "prog", False) == "食べ て い る"
    assert ja_polite_question(eat, "past", True) == "食べ ま せ ん でし た か ？"
    read = next(v for v in LEX.transitive if v.en.base == "read").ja
    assert (read["ta"], read["nai"], read["masu"]) == ("読 ん だ", "読 ま", "読 み")


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


def test_the_docstring_examples_of_sentences_and_inflection():
    """The usage lines at the top of ``sentences`` and ``inflection`` show what they return."""
    pair = sentences.sample(random.Random(0))
    assert repr(pair) in sentences.__doc__
    eat = inflection.japanese_verb("食べ=る")
    assert set(eat) == {"dict", "nai", "ta", "te", "masu"}
    assert ja_plain(eat, "past", True) == "食べ な かっ た"
    assert inflection.en_statement(inflection.english_verb("eat/ate"), "pres", False, "3") == "eats"
    assert data.sample is sentences.sample  # still importable from generate, as before
