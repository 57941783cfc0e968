"""Sentences of the embedded corpus (dlhack.corpus.sentences): one Japanese rendering per English
sentence, SOV order with particles, numerals floated after the object."""
import random
import re

import pytest

from dlhack.corpus import sentences
from dlhack.corpus.phrases import LEX


@pytest.fixture(scope="module")
def samples():
    """60,000 draws from the grammar (with repeats), as english -> japanese."""
    rng, seen = random.Random(11), {}
    for _ in range(60000):
        en, ja = sentences.sample(rng)
        assert seen.setdefault(en, ja) == ja, (en, seen[en], ja)
    return seen


def test_each_english_sentence_has_one_japanese_rendering(samples):
    # the fixture asserts it draw by draw; here: the grammar is far from exhausted
    assert len(samples) > 50000


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


def test_the_docstring_example():
    """The usage line at the top of ``sentences`` shows what it returns."""
    assert repr(sentences.sample(random.Random(0))) in sentences.__doc__
