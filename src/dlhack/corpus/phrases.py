"""Phrases of the embedded corpus: the lexicon read from :mod:`dlhack.corpus.grammar`, and noun
phrases and predicates rendered in English and Japanese at once. :mod:`dlhack.corpus.sentences`
builds sentences from them.

Japanese order inside a noun phrase: determiner, adjective, noun ("私 の 赤い 車"); a numeral
with its counter floats after the particle ("りんご を 三 つ"), so phrases carry it apart.
"""
from typing import NamedTuple

from dlhack.corpus import grammar as g
from dlhack.corpus.inflection import BE, English, english_verb, ja_predicate, japanese_verb, plural


class Noun(NamedTuple):
    en: str
    pl: str
    ja: str
    ctr: str   # Japanese counter (つ, 匹, 冊, 杯 for drinks); "" when not counted
    tags: str
    art: str   # "a" countable, "mass", "the" always "the", "" never an article
    unit: str = ""  # "cup" or "glass" for drinks: "two cups of coffee" -> "コーヒー を 二 杯"


class Place(NamedTuple):
    prep: str  # in, at, on
    np: str    # "the park", "tokyo", "home"
    ja: str
    tags: str

    @property
    def loc(self):
        return f"{self.prep} {self.np}"


class Verb(NamedTuple):
    en: English
    ja: dict            # stems from inflection.japanese_verb
    objs: tuple         # nouns it takes as object
    people: float       # how often the object is a person instead
    particle: str       # を, or に (meet, call, climb, ride)
    places: tuple       # where it can happen
    tools: tuple        # (english, japanese) instrument phrases
    flags: str
    dest: str = ""      # motion verbs: に or まで


class Adjective(NamedTuple):
    en: str
    ja: str
    i_adj: bool         # 大きい (i) or 静か (na: "静か な 公園", "静か だ")

    @property
    def attr(self):
        return self.ja if self.i_adj else self.ja + " な"


class Phrase(NamedTuple):
    en: str
    ja: str
    person: str = "3"   # English agreement: 1 (i), 2 (you), 3 (he, the dog), p (we, they)
    human: bool = False
    qty: str = ""       # numeral and counter, said after the particle
    noun: Noun = None


class Lexicon:
    """Every table of :mod:`dlhack.corpus.grammar`, parsed into the types above."""

    def __init__(self):
        self.nouns = {}
        for en, ja, ctr, tags, *art in g.entries(g.NOUNS):
            en, _, pl = en.partition("/")
            unit = ctr if ctr in ("cup", "glass") else ""
            default = "mass" if set(tags) & set("MD") else "" if set(tags) & set("SZOL") else "a"
            art = {"0": "", "the": "the"}[art[0]] if art else default
            self.nouns[en] = Noun(en, pl or plural(en), ja, "杯" if unit else ctr.strip("-"),
                                  tags.strip("-"), art, unit)
        self.places = [Place(f[0], " ".join(f[1:-2]), f[-2], f[-1]) for f in g.entries(g.PLACES)]
        place_nouns = {p.np: Noun(p.np, p.np, p.ja, "", "@" + p.tags, "") for p in self.places}
        self.adjectives, self.adj_for, self.adj_subjects = [], {}, {}
        for en, ja, kind, targets in g.entries(g.ADJECTIVES):
            adj = Adjective(en, ja, kind == "i")
            self.adjectives.append(adj)
            tags, *words = targets.split() if not targets[0].islower() else ("", *targets.split())
            for noun in list(self.nouns.values()) + list(place_nouns.values()):
                if set(tags) & set(noun.tags) or noun.en in words:
                    self.adj_for.setdefault(noun.en, []).append(adj)
                    self.adj_subjects.setdefault(en, []).append(noun)
        self.nouns.update(place_nouns)
        self.people, self.family = self.tagged("P"), self.tagged("Y")
        self.animals = self.tagged("A")
        self.destinations = [p for p in self.places if p.np != "home"]
        self.near = [p for p in self.destinations if p.tags in "obh"]  # walk/run to, be in
        self.buildings = [n for n in place_nouns.values() if n.en.startswith("the ")
                          and "b" in n.tags] + [self.nouns["house"]]
        self.positions = {}  # on/in/under/...: (ja, nouns that can be there)
        for en, ja, tag in g.entries(g.POSITIONS):
            self.positions[en] = (ja, self.buildings if tag == "H" else self.tagged(tag))
        self.pronouns = {f[0]: f for f in g.entries(g.PRONOUNS)}  # (subject, object, poss, ja, p)
        self.names = list(g.entries(g.NAMES))
        self.numbers = list(g.entries(g.NUMBERS))
        self.days = list(g.entries(g.DAYS))
        self.times = {tense: [(" ".join(f[:-1]), f[-1]) for f in g.entries(table)]
                      for tense, table in g.TIMES.items()}
        self.adverbs = list(g.entries(g.ADVERBS))
        self.vehicles = [(en.rstrip("+"), ja) for en, ja in g.entries(g.VEHICLES)]
        self.near_vehicles = [(en, ja) for en, ja in g.entries(g.VEHICLES) if "+" not in en]
        self.transitive = [self.verb(*row) for row in g.rows(g.TRANSITIVE)]
        self.intransitive = [self.verb(en, ja, "", places, "", flags)
                             for en, ja, places, flags in g.rows(g.INTRANSITIVE)]
        self.motion = [self.verb(en, ja, "", "", "", flags)._replace(dest=dest)
                       for en, ja, dest, flags in g.rows(g.MOTION)]
        bases = [v.en.base for v in self.transitive]
        self.ambiguous = {b for b in bases if bases.count(b) > 1}  # play: する or 弾く
        self.put_in = japanese_verb("入れ=る")  # "put the key in the box": 入れる, not 置く
        self.go_home = japanese_verb("帰-る")  # "go home": 家 に 帰る
        self.exist = {True: japanese_verb("い=る"), False: japanese_verb("あ-る")}
        self.like_verbs = {w: english_verb(f"{w}/{w}d") for w in ("like", "hate")}
        self.things = [n for n in self.tagged("TRFG") if n.art == "a"]
        self.likeable = self.tagged("FMDASO") + [self.nouns[n] for n in ("movie", "anime", "drama")]
        self.skills = self.tagged("SZO")
        self.food = self.tagged("FMD")
        self.jobs = [n for n in self.people if n.en not in
                     ("boy", "girl", "man", "woman", "child", "baby", "friend", "tourist")]

    def tagged(self, tags):
        """Nouns carrying any of ``tags`` (noun tags, or ``@`` and place tags)."""
        return [n for n in self.nouns.values() if set(n.tags) & set(tags)]

    def verb(self, en, ja, objs, places, tools, flags):
        """One row of a verb table as a :class:`Verb`."""
        nouns = []
        for item in objs.split():
            if item.startswith("@"):  # places as objects: "visited kyoto", not "visited home"
                nouns += [n for n in self.tagged(item[1:]) if "@" in n.tags
                          and (n.en.startswith("the ") or "c" in n.tags)]
            elif len(item) == 1 and item != "N":
                nouns += [n for n in self.tagged(item) if "@" not in n.tags]
            elif item != "N":
                nouns.append(self.nouns[item.replace("_", " ")])
        people = 0.0 if "N" not in objs.split() else 0.4 if nouns else 1.0
        where = tuple(p for p in self.places if set(p.tags) & set(places))
        tool_list = tuple(tuple(f) for f in g.entries(g.TOOLS[tools])) if tools else ()
        return Verb(english_verb(en), japanese_verb(ja), tuple(nouns), people,
                    "に" if "N" in flags else "を", where, tool_list, flags)


LEX = Lexicon()


def article(word):
    """``a`` or ``an`` before ``word`` (``an apple``, ``a university``)."""
    return "an" if word[0] in "aeiou" and not word.startswith("uni") else "a"


def noun_phrase(rng, noun, dets="a the this that poss num", p_adj=0.2):
    """A noun with a determiner drawn from ``dets`` (and what the noun allows), maybe an adjective.

    ``num`` gives "three red apples" -> "赤い りんご" with qty "三 つ", or "two cups of tea" ->
    "お茶" with qty "二 杯"; ``bare`` gives a bare plural ("apples"), for habits and likes.
    """
    if noun.art in ("the", ""):
        det = noun.art
    elif "Y" in noun.tags:  # "my mother" only: someone else's mother would be お母さん
        det = "my"
    else:
        allowed = dets.split()
        if noun.art == "mass":
            options = ["bare"] + [d for d in ("the", "this", "that") if d in allowed]
        else:
            options = [d for d in ("a", "a", "the", "this", "that", "poss", "bare") if d in allowed]
        det = rng.choice(options + ["num", "num"] * ("num" in allowed and bool(noun.ctr)))
    adjs = LEX.adj_for.get(noun.en) if noun.art in ("a", "mass") else None
    adj = rng.choice(adjs) if adjs and rng.random() < p_adj else None
    pre = adj.en + " " if adj else ""
    ja = (adj.attr + " " if adj else "") + noun.ja
    qty = ""
    if det == "num":
        n = rng.randrange(1 if noun.unit else 2, 10)
        number, qty = LEX.numbers[n - 1][0], f"{LEX.numbers[n - 1][1]} {noun.ctr}"
        if noun.unit:  # a cup of coffee, three glasses of cold milk
            en = f"a {noun.unit} of {pre}{noun.en}" if n == 1 else \
                f"{number} {plural(noun.unit)} of {pre}{noun.en}"
        else:
            en = f"{number} {pre}{noun.pl}"
    elif det == "bare":
        en = pre + (noun.pl if noun.art == "a" else noun.en)
    elif det == "a":
        en = f"{article(pre or noun.en)} {pre}{noun.en}"
    elif det in ("poss", "my"):
        p = LEX.pronouns["i"] if det == "my" else rng.choice(list(LEX.pronouns.values()))
        en, ja = f"{p[2]} {pre}{noun.en}", f"{p[3]} の {ja}"
    else:  # the, this, that, or none
        en = " ".join(filter(None, (det, pre + noun.en)))
        ja = {"this": "この ", "that": "あの "}.get(det, "") + ja
    return Phrase(en, ja, "3", bool(set(noun.tags) & set("PY")), qty, noun)


def pronoun(key, case=0):
    """Pronoun ``key`` (i, you, he, ...) as subject (case 0) or object (case 1)."""
    p = LEX.pronouns[key]
    return Phrase(p[case], p[3], p[4], True)


def person(rng, case=0, i_ok=True):
    """Somebody: a pronoun, a name, "the teacher", "my mother"."""
    r = rng.random()
    if r < 0.3:
        keys = list(LEX.pronouns) if i_ok else ["you", "he", "she", "they"]
        return pronoun(rng.choice(keys), case)
    if r < 0.65:
        en, ja = rng.choice(LEX.names)
        return Phrase(en, ja, "3", True)
    nouns = LEX.people if r < 0.88 else LEX.family
    return noun_phrase(rng, rng.choice(nouns), "the this that poss", 0.15)


def actor(rng, animal_ok=False, i_ok=True):
    """The subject of a verb: somebody, or (for verbs that allow it) an animal."""
    if animal_ok and rng.random() < 0.2:
        return noun_phrase(rng, rng.choice(LEX.animals), "the this that poss", 0.2)
    return person(rng, 0, i_ok)


def position(rng, rels=None):
    """"on the desk" -> "机 の 上 に", "in front of the bank" -> "銀行 の 前 に".

    ``rels``: the relations to choose from (default all: on, under, in, near, in front of, ...).
    """
    rel = rng.choice(rels or list(LEX.positions))
    ja_rel, targets = LEX.positions[rel]
    where = noun_phrase(rng, rng.choice(targets), "the the the poss", 0)
    return f"{rel} {where.en}", f"{where.ja} の {ja_rel} に"


def time_phrase(rng, tense):
    """A time that fits the tense: "yesterday" (past), "every day" (present), "now" (progressive).

    Days and clock hours add numerals: "at seven" -> "七 時 に", "three days ago" -> "三 日 前 に".
    """
    r = rng.random()
    if tense == "prog" or r < 0.55:
        return rng.choice(LEX.times[tense])
    if r < 0.75:
        en, ja = rng.choice(LEX.days)
        return ("every " + en, f"毎週 {ja} に") if tense == "pres" else ("on " + en, ja + " に")
    if r < 0.9 or tense == "pres":
        en, ja = rng.choice(LEX.numbers)
        return "at " + en, ja + " 時 に"
    en, ja = rng.choice(LEX.numbers[1:10])
    if tense == "past":
        return f"{en} days ago", f"{ja} 日 前 に"
    return f"in {en} days", f"{ja} 日 後 に"


def be_verb(subj, tense, neg, question):
    """English "be" before a predicate: ``is not``; in questions (``will``, ``be``) around it."""
    if tense == "fut":
        return ("will", "be") if question else ("will not be" if neg else "will be", "")
    word = BE[subj.person][tense == "past"]
    return (word, "") if question else (word + " not" * neg, "")


def predicate(rng, mood, subj, tense, en_pred, ja_word, i_adj, time=("", "")):
    """Put subject, "be" and predicate together in both languages."""
    question = mood == "yn"
    neg = not question and rng.random() < 0.25
    first, second = be_verb(subj, tense, neg, question)
    if question:
        en = " ".join(filter(None, [first, subj.en, second, en_pred, time[0], "?"]))
    else:
        en = " ".join(filter(None, [subj.en, first, en_pred, time[0], "."]))
    ja = " ".join(filter(None, [subj.ja, "は", time[1], ja_predicate(ja_word, i_adj, tense, neg,
                                                                    question)]))
    return en, ja + ("" if question else " 。")
