"""Phrases of the embedded corpus (dlhack.corpus.phrases): the lexicon parsed from the grammar's
tables, and noun phrases in both languages, in Japanese order (determiner, adjective, noun; a
numeral with its counter carried apart, to float after the particle)."""
import random
import re

import pytest

from dlhack.corpus import grammar
from dlhack.corpus.phrases import LEX, article, noun_phrase

NUMBERS = dict(LEX.numbers)  # "three" -> "三"


def test_every_table_row_is_parsed():
    assert len(LEX.nouns) >= len(list(grammar.entries(grammar.NOUNS)))
    assert len(LEX.transitive) == len(list(grammar.rows(grammar.TRANSITIVE)))
    for noun in LEX.nouns.values():
        assert noun.en and noun.ja and " " not in noun.ja.replace(" の ", ""), noun
    assert LEX.nouns["apple"].ja == "りんご" and LEX.nouns["apple"].ctr == "つ"


def test_article():
    assert [article(w) for w in ("apple", "car", "university", "old")] == ["an", "a", "a", "an"]


@pytest.mark.parametrize("seed", range(5))
def test_a_numeral_is_carried_apart_with_its_counter(seed):
    """"three red apples" -> "赤い りんご" with qty "三 つ"; "two cups of tea" -> "お茶", "二 杯"."""
    rng = random.Random(seed)
    apples = noun_phrase(rng, LEX.nouns["apple"], dets="num", p_adj=1.0)
    number = re.fullmatch(r"(\w+) \w+ apples", apples.en).group(1)
    assert apples.qty == f"{NUMBERS[number]} つ"
    assert apples.ja.endswith(" りんご") and apples.ja != "りんご"  # the adjective goes before
    tea = noun_phrase(rng, LEX.nouns["tea"], dets="num", p_adj=0)  # mass: or bare "tea"
    number = re.fullmatch(r"(?:(\w+) cups? of )?tea", tea.en).group(1)
    assert (tea.ja, tea.qty) == ("お茶", f"{NUMBERS.get(number, '一')} 杯" if number else "")


def test_a_determiner_and_an_adjective_come_before_the_noun():
    rng = random.Random(0)
    for dets, first in (("this", "この"), ("that", "あの"), ("poss", None)):
        phrase = noun_phrase(rng, LEX.nouns["apple"], dets=dets, p_adj=1.0)
        words = phrase.ja.split()
        assert words[-1] == "りんご" and len(words) >= 3, phrase
        if first:
            assert words[0] == first, phrase
        else:
            assert words[-3] == "の", phrase  # 私 の 大きい りんご
