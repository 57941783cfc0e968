"""Inflection: English verb groups and Japanese verb and adjective endings, by tense and mood.

    eat = japanese_verb("食べ=る")           # stems: dict, nai, ta, te, masu
    ja_plain(eat, "past", True)              # "食べ な かっ た"
    en_statement(english_verb("eat/ate"), "pres", False, "3")   # "eats"

The verbs of :mod:`dlhack.corpus.grammar`'s tables are written compactly (``run/ran/running``,
``wait/waited+for``; ``読-む`` godan, ``食べ=る`` ichidan, ``勉強-する``); the functions here expand
them into their forms, and give the verb group a sentence ends with: English auxiliaries and
agreement, Japanese plain statements and polite questions. Japanese endings are tokenised as in
small_parallel_enja ("食べ な かっ た": four tokens), so the model learns them piece by piece.
"""
from typing import NamedTuple


def plural(word):
    """Regular English plural: ``box`` -> ``boxes``, ``city`` -> ``cities``, ``pen`` -> ``pens``."""
    if word.endswith(("s", "x", "ch", "sh")):
        return word + "es"
    if word.endswith("y") and word[-2] not in "aeiou":
        return word[:-1] + "ies"
    return word + "s"


class English(NamedTuple):
    base: str
    s3: str        # he/she form: eats, watches, goes, studies
    past: str
    ing: str       # doubled consonants (running) are written out in the tables
    particle: str  # "for" in "wait for": it stays after the verb ("who did tom wait for ?")


def english_verb(field):
    """Parse ``run/ran/running`` or ``wait/waited+for`` into an :class:`English` verb."""
    forms, _, particle = field.partition("+")
    base, past, *rest = forms.split("/")
    s3 = base + "es" if base.endswith("o") else plural(base)
    if rest:
        ing = rest[0]
    else:  # make -> making, but see -> seeing
        ing = (base[:-1] if base.endswith("e") and not base.endswith("ee") else base) + "ing"
    return English(base, s3, past, ing, particle)


# godan ending -> (a-row, i-row, past, te); "っ た" is two tokens, as in small_parallel_enja
GODAN = {
    "う": ("わ", "い", "っ た", "っ て"), "く": ("か", "き", "い た", "い て"),
    "ぐ": ("が", "ぎ", "い だ", "い で"), "す": ("さ", "し", "し た", "し て"),
    "つ": ("た", "ち", "っ た", "っ て"), "ぬ": ("な", "に", "ん だ", "ん で"),
    "ぶ": ("ば", "び", "ん だ", "ん で"), "む": ("ま", "み", "ん だ", "ん で"),
    "る": ("ら", "り", "っ た", "っ て"),
}


def japanese_verb(spec):
    """Stems of a verb written ``読-む`` (godan), ``食べ=る`` (ichidan) or ``勉強-する``.

    Returns a dict of token strings: ``dict`` (dictionary form), ``nai`` (before ``な い``),
    ``ta`` (plain past), ``te`` (te-form) and ``masu`` (before ``ま す``).
    """
    if "=" in spec:  # ichidan: the stem never changes
        root = spec.split("=")[0]
        return {"dict": root + " る", "nai": root, "ta": root + " た", "te": root + " て",
                "masu": root}
    root, ending = spec.split("-")
    if ending == "する":
        pre = root + " " if root else ""
        return {"dict": pre + "する", "nai": pre + "し", "ta": pre + "し た", "te": pre + "し て",
                "masu": pre + "し"}
    if spec == "来-る":
        return {"dict": "来 る", "nai": "来", "ta": "来 た", "te": "来 て", "masu": "来"}
    a, i, ta, te = GODAN[ending]
    if spec == "行-く":  # the one irregular godan past: 行った, not 行いた
        ta, te = "っ た", "っ て"
    return {"dict": f"{root} {ending}", "nai": f"{root} {a}", "ta": f"{root} {ta}",
            "te": f"{root} {te}", "masu": f"{root} {i}"}


# --- verb groups and endings --------------------------------------------------------------
BE = {"1": ("am", "was"), "2": ("are", "were"), "3": ("is", "was"), "p": ("are", "were")}


def en_statement(en, tense, neg, person):
    """English verb group of a statement: ``eats``, ``did not eat``, ``will eat``, ``is eating``."""
    third = person == "3"
    if tense == "pres" and neg:
        words = ("does not " if third else "do not ") + en.base
    elif tense == "pres":
        words = en.s3 if third else en.base
    elif tense == "past":
        words = "did not " + en.base if neg else en.past
    elif tense == "fut":
        words = ("will not " if neg else "will ") + en.base
    else:
        words = BE[person][0] + (" not " if neg else " ") + en.ing
    return words + (" " + en.particle if en.particle else "")


def en_question(en, tense, neg, person):
    """(auxiliary, main verb) of a question: ``("did", "eat")``, ``("is", "eating")``."""
    if tense == "prog":
        aux, main = BE[person][0], en.ing
    else:
        aux = {"pres": "does" if person == "3" else "do", "past": "did", "fut": "will"}[tense]
        main = en.base
    if neg:  # negative questions are past only: "didn 't tom eat the apple ?"
        aux = "didn 't"
    return aux, main + (" " + en.particle if en.particle else "")


def ja_plain(forms, tense, neg):
    """Plain ending of a statement: ``食べ る``, ``食べ な かっ た``, ``食べ て い る``."""
    if tense == "past":
        return forms["nai"] + " な かっ た" if neg else forms["ta"]
    if tense == "prog":
        return forms["te"] + (" い な い" if neg else " い る")
    return forms["nai"] + " な い" if neg else forms["dict"]  # present and future alike


def ja_polite_question(forms, tense, neg):
    """Polite ending of a question: ``食べ ま し た か ？``, ``食べ ま せ ん でし た か ？``."""
    if tense == "prog":
        return forms["te"] + " い ま す か ？"
    if tense == "past":
        return forms["masu"] + (" ま せ ん でし た か ？" if neg else " ま し た か ？")
    return forms["masu"] + " ま す か ？"


def ja_predicate(word, i_adj, tense, neg, question):
    """An adjective or noun as predicate: ``大き かっ た``, ``静か で は な い``, ``先生 で す か ？``."""
    past = tense == "past"
    if i_adj:  # 大きい -> 大き かっ た, 大き く な い
        stem = word[:-1]
        if question:
            return (stem + " かっ た" if past else word) + " で す か ？"
        if neg:
            return stem + " く な " + ("かっ た" if past else "い")
        return stem + " かっ た" if past else word
    if question:
        return word + (" でし た か ？" if past else " で す か ？")
    if neg:
        return word + " で は な " + ("かっ た" if past else "い")
    return word + (" だっ た" if past else " だ")
