"""Inflection (dlhack.corpus.inflection): English verb groups and Japanese endings by tense and
mood, tokenised as small_parallel_enja tokenises them."""
from dlhack.corpus import inflection
from dlhack.corpus.inflection import ja_plain, ja_polite_question
from dlhack.corpus.phrases import LEX


def test_tense_negation_and_politeness_inflect_the_verb():
    eat = next(v for v in LEX.transitive if v.en.base == "eat").ja
    assert ja_plain(eat, "past", False) == "食べ た"
    assert ja_plain(eat, "past", True) == "食べ な かっ た"
    assert ja_plain(eat, "prog", False) == "食べ て い る"
    assert ja_polite_question(eat, "past", True) == "食べ ま せ ん でし た か ？"
    read = next(v for v in LEX.transitive if v.en.base == "read").ja
    assert (read["ta"], read["nai"], read["masu"]) == ("読 ん だ", "読 ま", "読 み")


def test_the_docstring_examples():
    """The usage lines at the top of ``inflection`` show what they return."""
    eat = inflection.japanese_verb("食べ=る")
    assert set(eat) == {"dict", "nai", "ta", "te", "masu"}
    assert ja_plain(eat, "past", True) == "食べ な かっ た"
    assert inflection.en_statement(inflection.english_verb("eat/ate"), "pres", False, "3") == "eats"
