"""The glossary (GLOSSARY.md) and the lessons use the same Japanese terms, spelled the same way.

Three checks over the markdown cells of ``lessons/*.ipynb`` (code cells are not read):

- every glossary entry appears in at least one lesson, and in the lesson its row names;
- every Japanese word in a lesson is a glossary entry, part of one, or one of ``NOT_TERMS``
  (the example sentence of lesson 1 and a few grammatical leftovers);
- no lesson spells an entry another way: a spelling from the row's "not written" column, or the
  entry with a long-vowel mark ー added or dropped (パラメーターサーバー for パラメータサーバ).

When a check fails, the message says which lesson wrote what, and what to change: the lesson,
or the glossary.
"""
import json
import re
from pathlib import Path

import pytest

from tests.support import LESSONS, ROOT

GLOSSARY = ROOT / "GLOSSARY.md"

# Japanese in the lessons that is not a course term: lesson 1's example sentence and its
# tokens (トム 食べ た 三 つ りんご 昨日 。, the particles は を に), the title of lesson 0, and
# what is left of a phrase once its glossary term is taken out (集団通信の一つ, パラメータサーバ型).
NOT_TERMS = {"はじめに", "トム", "食べ", "た", "し", "ま", "三", "つ", "りんご", "昨日", "は", "を",
             "に", "の一つ", "型"}

# Runs of Japanese script: kana, kanji, the long-vowel mark and the middle dot.
JAPANESE = re.compile(r"[\u3040-\u30ff\u3400-\u4dbf\u4e00-\u9fff々]+")
IGNORED = "ー・"  # what normalize drops: the marks whose addition or omission is a misspelling


def normalize(text):
    return "".join(ch for ch in text if ch not in IGNORED)


def parse_glossary(text):
    """The table of GLOSSARY.md as a list of dicts: term, english, lesson, variants."""
    entries = []
    for line in text.splitlines():
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or not JAPANESE.search(cells[0]) or cells[0] == "日本語":
            continue
        term, _reading, english, meaning, lesson, variants = cells
        entries.append({"term": term, "english": english, "meaning": meaning, "lesson": lesson,
                        "variants": [v.strip() for v in variants.split(",") if v.strip()]})
    return entries


def lesson_markdown(path):
    cells = json.loads(path.read_text(encoding="utf-8"))["cells"]
    return "\n".join("".join(c["source"]) for c in cells if c["cell_type"] == "markdown")


def misspellings(markdown, entries):
    """``(written, term)`` for each way ``markdown`` spells a glossary term differently."""
    found = []
    for entry in entries:
        term = entry["term"]
        for variant in entry["variants"]:
            if variant in markdown:
                found.append((variant, term))
        if not JAPANESE.fullmatch(term):  # 秒速MN化: only its listed variants are checked
            continue
        for run in JAPANESE.findall(markdown):
            if normalize(term) in normalize(run) and (term not in run or term + "ー" in run):
                found.append((run, term))
    return sorted(set(found))


def unknown_words(markdown, entries):
    """Japanese words of ``markdown`` that are neither glossary terms nor ``NOT_TERMS``."""
    rest = markdown
    for term in sorted((e["term"] for e in entries), key=len, reverse=True):
        rest = rest.replace(term, " ")
    return sorted(set(JAPANESE.findall(rest)) - NOT_TERMS)


@pytest.fixture(scope="module")
def entries():
    found = parse_glossary(GLOSSARY.read_text(encoding="utf-8"))
    assert len(found) >= 10, f"{GLOSSARY.name}: expected a table of terms, parsed {len(found)} rows"
    return found


@pytest.fixture(scope="module")
def lessons():
    assert LESSONS, "no lessons/NN_*.ipynb found"
    return {path.name[:2]: lesson_markdown(path) for path in LESSONS}


def test_the_checks_catch_what_they_should():
    entries = parse_glossary(
        "| 日本語 | reading | English | meaning | lesson | not written |\n"
        "|---|---|---|---|---|---|\n"
        "| パラメータサーバ | paramēta sāba | parameter server | holds the parameters | 04 | |\n"
        "| 集団通信 | shūdan tsūshin | collective communication | all ranks | 02 | 集合通信 |\n")
    assert [e["term"] for e in entries] == ["パラメータサーバ", "集団通信"]
    assert misspellings("a parameter server (パラメータサーバ) and 集団通信", entries) == []
    assert misspellings("the server (パラメーターサーバー)", entries) == [
        ("パラメーターサーバー", "パラメータサーバ")]
    assert misspellings("(パラメータサーバー)", entries) == [("パラメータサーバー", "パラメータサーバ")]
    assert misspellings("collectives (集合通信)", entries) == [("集合通信", "集団通信")]
    assert unknown_words("パラメータサーバ型 and 集団通信の一つ", entries) == []
    assert unknown_words("data parallelism (データ並列)", entries) == ["データ並列"]


def test_every_entry_is_used_by_a_lesson(entries, lessons):
    unused = [e["term"] for e in entries if not any(e["term"] in md for md in lessons.values())]
    assert not unused, (f"{GLOSSARY.name} lists terms that no lesson's markdown uses: {unused}. "
                        "Use each in the lesson that introduces it, or drop it from the glossary.")


def test_each_entry_appears_in_the_lesson_it_names(entries, lessons):
    wrong = [f"{e['term']} (lesson {e['lesson']})" for e in entries
             if e["term"] not in lessons.get(e["lesson"], "")]
    assert not wrong, (f"{GLOSSARY.name}: these rows name a lesson whose markdown does not use "
                       f"the term: {wrong}. Fix the lesson column, or use the term there.")


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_spells_terms_the_glossary_way(path, entries):
    wrong = misspellings(lesson_markdown(path), entries)
    assert not wrong, f"{path.name}: " + "; ".join(
        f"writes {written}, the glossary spells it {term}" for written, term in wrong)


@pytest.mark.parametrize("path", LESSONS, ids=lambda p: p.name)
def test_lesson_japanese_words_are_in_the_glossary(path, entries):
    unknown = unknown_words(lesson_markdown(path), entries)
    assert not unknown, (
        f"{path.name} uses Japanese words that {GLOSSARY.name} does not list: {unknown}. Add each "
        f"term as a row (with the lesson that introduces it); if a word is an example, not a "
        f"term, add it to NOT_TERMS in {Path(__file__).name}.")
