"""Sentences of the embedded corpus: each kind of clause, drawn at random in both languages.

    sample(random.Random(0))     # ('that watch was fast .', 'あの 腕時計 は 速 かっ た 。')

Each construction draws its words from the lexicon (:mod:`dlhack.corpus.phrases`) and renders
the clause in English and Japanese at once, so every English sentence has one Japanese
rendering:

- ``action``: a verb with its object and adjuncts, as a statement, a yes/no or wh- question
  (``_wh``), a request, a suggestion, or a wish; the Japanese orders the adjuncts by
  ``JA_ORDER`` and puts the verb last (SVO -> SOV), with particles;
- ``existential``: "there is a cat under the bed" (いる for the living, ある otherwise);
- ``describe``, ``likes``, ``identity``: adjective, 好き/嫌い/得意 and noun predicates.

``KINDS`` gives each (construction, mood) its share of the corpus; ``sample`` draws one pair.
Verb endings come from :mod:`dlhack.corpus.inflection`.
"""
from dlhack.corpus.inflection import (
    BE,
    en_question,
    en_statement,
    ja_plain,
    ja_polite_question,
    ja_predicate,
)
from dlhack.corpus.phrases import (
    LEX,
    actor,
    article,
    noun_phrase,
    person,
    position,
    predicate,
    pronoun,
    time_phrase,
)

TENSES = ("pres", "past", "past", "fut", "prog")  # past twice: the commonest tense in stories
JA_ORDER = ("time", "adv", "place", "with", "by", "from", "to", "tool", "dest", "pos", "obj")
EN_ORDER = ("obj", "to", "from", "pos", "dest", "by", "tool", "with", "place", "time")
WANT = {("pres", False): ("want", "たい"), ("pres", True): ("do not want", "たく な い"),
        ("past", False): ("wanted", "たかっ た"), ("past", True): ("did not want", "たく な かっ た")}


def _complements(rng, verb, kind, tense, subj):
    """The phrases around a verb as slot -> (english, japanese), and the Japanese verb to use."""
    slots, ja_verb = {}, verb.ja
    if kind == "tr":
        if rng.random() < verb.people:
            obj = person(rng, case=1)
        else:
            obj = noun_phrase(rng, rng.choice(verb.objs), "a the this that poss num bare"
                              if tense == "pres" else "a the this that poss num")
        slots["obj"] = (obj.en, f"{obj.ja} {verb.particle}" + (" " + obj.qty) * bool(obj.qty), obj)
        if "t" in verb.flags and rng.random() < 0.7:
            to = person(rng, case=1)
            slots["to"] = ("to " + to.en, to.ja + " に")
        if "f" in verb.flags and rng.random() < 0.5:
            source = person(rng, case=1)
            slots["from"] = ("from " + source.en, source.ja + " から")
        if "P" in verb.flags:
            slots["pos"] = position(rng, ("on", "in", "under"))
            if slots["pos"][0].startswith("in "):  # put in a box: 入れる; put on a desk: 置く
                ja_verb = LEX.put_in
    if kind == "mo":
        far = False
        if rng.random() < 0.12:  # "went home" -> "家 に 帰 っ た"; "came home" is left out
            if verb.en.base == "come":
                return None, None
            slots["dest"] = ("home", "家 " + verb.dest)
            ja_verb = LEX.go_home if verb.en.base == "go" else ja_verb
        else:
            place = rng.choice(LEX.destinations if verb.dest == "に" else LEX.near)
            slots["dest"] = ("to " + place.np, f"{place.ja} {verb.dest}")
            far = "c" in place.tags
        if "v" in verb.flags and rng.random() < 0.3:  # by plane or ship only to far places
            vehicle = rng.choice(LEX.vehicles if far else LEX.near_vehicles)
            slots["by"] = ("by " + vehicle[0], vehicle[1] + " で")
    elif verb.places and rng.random() < 0.3:
        place = rng.choice(verb.places)
        slots["place"] = (place.loc, place.ja + " で")
    if verb.tools and rng.random() < 0.3:
        en, ja = rng.choice(verb.tools)
        slots["tool"] = (en, ja + " で")
    if subj is not None and subj.human and rng.random() < 0.08:
        friend = person(rng, case=1)
        slots["with"] = ("with " + friend.en, friend.ja + " と")
    if rng.random() < 0.3:
        slots["time"] = time_phrase(rng, tense)
    return slots, ja_verb


def action(rng, mood):
    """A verb with its object and adjuncts, as mood: stmt, yn, wh, please, lets, want, want?."""
    r = rng.random()
    kind = "tr" if r < 0.62 else "in" if r < 0.82 else "mo"
    verb = rng.choice({"tr": LEX.transitive, "in": LEX.intransitive, "mo": LEX.motion}[kind])
    if mood in ("please", "lets") and "n" in verb.flags:
        return None  # "please lose the key ." is not a sentence anyone says
    tense = rng.choice(TENSES if "p" in verb.flags else TENSES[:4])
    subj = None
    if mood in ("please", "lets"):
        tense = "fut"  # only for the choice of time phrase: "tomorrow", not "yesterday"
    elif mood.startswith("want"):  # 食べ たい is said of oneself, or asked of "you"
        tense = rng.choice(("pres", "past"))
        subj = pronoun("you" if mood == "want?" else rng.choice(("i", "we")))
    else:
        subj = actor(rng, "a" in verb.flags, i_ok=mood == "stmt")
        if tense == "pres" and subj.person != "3" and verb.en.past == verb.en.base:
            tense = "past"  # "i read the book ." would be present and past at once
    p_neg = {"stmt": 0.25, "please": 0.2, "want": 0.25, "yn": 0.15 * (tense == "past")}
    neg = rng.random() < p_neg.get(mood, 0)
    slots, ja_verb = _complements(rng, verb, kind, "fut" if mood == "want" and tense == "pres"
                                  else tense, subj)
    if slots is None:
        return None
    if mood == "wh":
        return _wh(rng, verb, kind, tense, subj, slots, ja_verb)
    head = [subj.ja + " は"] if subj else []
    if mood == "stmt" and tense == "pres" and not neg and "time" not in slots \
            and rng.random() < 0.3:  # "tom often eats apples": the adverb before the verb
        slots["adv"] = rng.choice(LEX.adverbs)
    rest = " ".join(slots[k][0] for k in EN_ORDER if k in slots)
    ja = " ".join(head + [slots[k][1] for k in JA_ORDER if k in slots])
    en, forms = verb.en, ja_verb
    main = en.base + (" " + en.particle if en.particle else "")
    if mood == "stmt":
        adv = slots["adv"][0] + " " if "adv" in slots else ""
        return (f"{subj.en} {adv}{en_statement(en, tense, neg, subj.person)} {rest} .",
                f"{ja} {ja_plain(forms, tense, neg)} 。")
    if mood == "yn":
        aux, main = en_question(en, tense, neg, subj.person)
        return f"{aux} {subj.en} {main} {rest} ?", f"{ja} {ja_polite_question(forms, tense, neg)}"
    if mood == "please":  # 食べ て くださ い, 食べ な い で くださ い
        ending = forms["nai"] + " な い で くださ い" if neg else forms["te"] + " くださ い"
        return f"please {'do not ' * neg}{main} {rest} .", f"{ja} {ending} 。"
    if mood == "lets":
        return f"let 's {main} {rest} .", f"{ja} {forms['masu']} ま しょ う 。"
    want, ending = WANT[tense, neg]
    if mood == "want?":
        aux = "do" if tense == "pres" else "did"
        return f"{aux} you want to {main} {rest} ?", f"{ja} {forms['masu']} {ending} で す か ？"
    return f"{subj.en} {want} to {main} {rest} .", f"{ja} {forms['masu']} {ending} 。"


def _wh(rng, verb, kind, tense, subj, slots, ja_verb):
    """Ask for one part of a clause: who, what, how many, where or when."""
    # "what did tom play ?" could be 弾く or する: no object question for such verbs
    targets = ["subj"] + ["obj"] * 2 * (kind == "tr" and verb.en.base not in LEX.ambiguous)
    targets += ["place"] * (kind != "mo")
    targets += ["time"] * (tense != "prog") + ["dest"] * (kind == "mo" and verb.dest == "に")
    target = rng.choice(targets)
    wh = "who"
    if target == "subj":
        subj = None
    elif target == "obj":
        obj = slots["obj"][2]
        noun = obj.noun
        if obj.human:
            slots["obj"] = ("", "誰 " + verb.particle)
        elif noun and noun.ctr and not noun.unit and noun.art == "a" and rng.random() < 0.4:
            count = "いくつ" if noun.ctr == "つ" else "何 " + noun.ctr  # 何 つ is not Japanese
            wh, slots["obj"] = "how many " + noun.pl, ("", f"{noun.ja} {verb.particle} {count}")
        else:
            wh, slots["obj"] = "what", ("", "何 " + verb.particle)
    else:
        wh = "when" if target == "time" else "where"
        ja_verb = verb.ja if target == "dest" else ja_verb  # "where did he go ?": not 帰る
        slots[target] = ("", {"time": "いつ", "place": "どこ で", "dest": "どこ に"}[target])
    rest = [slots[k][0] for k in EN_ORDER if k in slots]
    ja = " ".join([subj.ja + " は" if subj else "誰 が"] + [slots[k][1] for k in JA_ORDER
                                                           if k in slots])
    ja = f"{ja} {ja_polite_question(ja_verb, tense, False)}"
    if subj is None:  # who ate the apple ? -> 誰 が りんご を 食べ ま し た か ？
        return " ".join(filter(None, ["who", en_statement(verb.en, tense, False, "3")] + rest
                               + ["?"])), ja
    aux, main = en_question(verb.en, tense, False, subj.person)
    return " ".join(filter(None, [wh, aux, subj.en, main] + rest + ["?"])), ja


def existential(rng, mood):
    """"there is a cat under the bed ." -> "ベッド の 下 に 猫 が いる 。" (いる alive, ある not)."""
    alive = rng.random() < 0.5
    noun = rng.choice(LEX.animals + LEX.people if alive else LEX.things)
    if alive and rng.random() < 0.5:
        place = rng.choice(LEX.near)
        loc_en, loc_ja = place.loc, place.ja + " に"
    else:
        # a book on the desk, a cat under the bed, a man in front of the bank
        rels = ("on", "in", "under") if not alive else None if "A" in noun.tags else \
            ("near", "in front of", "behind", "next to")
        loc_en, loc_ja = position(rng, rels)
    past = rng.random() < 0.5
    forms, tense = LEX.exist[alive], "past" if past else "pres"
    if mood == "howmany":
        if not noun.ctr:
            return None
        count = "いくつ" if noun.ctr == "つ" else "何 " + noun.ctr
        return (f"how many {noun.pl} {BE['p'][past]} there {loc_en} ?",
                f"{loc_ja} {noun.ja} は {count} {ja_polite_question(forms, tense, False)}")
    if mood == "stmt" and rng.random() < 0.2:  # 猫 は い な い: a negative takes は
        nai = "な かっ た" if past else "な い"
        return (f"there {BE['3'][past]} no {noun.en} {loc_en} .",
                f"{loc_ja} {noun.ja} は {'' if not alive else 'い '}{nai} 。".replace("  ", " "))
    np = noun_phrase(rng, noun, "a num", 0.2)
    be = BE["p" if np.qty else "3"][past]
    ja = f"{loc_ja} {np.ja} が" + (" " + np.qty) * bool(np.qty)
    if mood == "yn":
        return f"{be} there {np.en} {loc_en} ?", f"{ja} {ja_polite_question(forms, tense, False)}"
    time = time_phrase(rng, tense) if past and rng.random() < 0.3 else ("", "")
    return (f"there {be} {np.en} {loc_en} {time[0]}".rstrip() + " .",
            f"{time[1]} {ja} {ja_plain(forms, tense, False)} 。".lstrip())


def describe(rng, mood):
    """"this book is interesting ." -> "この 本 は 面白い 。"; "tom was busy" -> "忙し かっ た"."""
    adj = rng.choice(LEX.adjectives)
    subjects = LEX.adj_subjects[adj.en]
    if any("P" in n.tags for n in subjects) and rng.random() < 0.5:  # tom, he, my mother
        subj = person(rng, 0, i_ok=mood == "stmt")
    else:
        subj = noun_phrase(rng, rng.choice(subjects), "the this that poss", 0)
    tense = rng.choice(("pres", "past", "fut") if subj.human else ("pres", "past"))
    # "tom was busy yesterday", but not "the zoo was large yesterday"
    time = time_phrase(rng, tense) if subj.human and rng.random() < 0.3 else ("", "")
    return predicate(rng, mood, subj, tense, adj.en, adj.ja, adj.i_adj, time)


def likes(rng, mood):
    """"tom likes cats ." -> "トム は 猫 が 好き だ 。" (also hate: 嫌い, good at: 得意)."""
    kind = rng.choice(("like", "like", "hate", "good"))
    subj = actor(rng, kind != "good", i_ok=mood == "stmt")
    pool = LEX.skills if kind == "good" else LEX.likeable if subj.human else LEX.food
    obj = noun_phrase(rng, rng.choice(pool), "bare", 0.1)
    tense = rng.choice(("pres", "past"))
    word = {"like": "好き", "hate": "嫌い", "good": "得意"}[kind]
    if kind == "good":
        en, ja = predicate(rng, mood, subj, tense, "good at " + obj.en, word, False)
        return en, ja.replace(f"{subj.ja} は ", f"{subj.ja} は {obj.ja} が ", 1)
    verb = LEX.like_verbs[kind]
    question = mood == "yn"
    neg = not question and rng.random() < 0.25
    tail = ja_predicate(word, False, tense, neg, question) + ("" if question else " 。")
    ja = f"{subj.ja} は {obj.ja} が {tail}"
    if question:
        aux, main = en_question(verb, tense, False, subj.person)
        return f"{aux} {subj.en} {main} {obj.en} ?", ja
    return f"{subj.en} {en_statement(verb, tense, neg, subj.person)} {obj.en} .", ja


def identity(rng, mood):
    """"tom is a doctor ." -> "トム は 医者 だ 。"; "they were students ." -> "学生 だっ た"."""
    subj = person(rng, 0, i_ok=mood == "stmt")
    while subj.noun is not None:  # a pronoun or a name: "the teacher is a doctor" is odd
        subj = person(rng, 0, i_ok=mood == "stmt")
    noun = rng.choice(LEX.jobs)
    pred = noun.pl if subj.person == "p" else f"{article(noun.en)} {noun.en}"
    return predicate(rng, mood, subj, rng.choice(("pres", "past")), pred, noun.ja, False)


KINDS = (  # (share of the corpus, construction, mood)
    (0.34, action, "stmt"), (0.08, action, "yn"), (0.13, action, "wh"), (0.04, action, "please"),
    (0.03, action, "lets"), (0.04, action, "want"), (0.02, action, "want?"),
    (0.05, existential, "stmt"), (0.02, existential, "yn"), (0.02, existential, "howmany"),
    (0.08, describe, "stmt"), (0.02, describe, "yn"), (0.06, likes, "stmt"), (0.02, likes, "yn"),
    (0.03, identity, "stmt"), (0.02, identity, "yn"),
)
_CUM = [sum(k[0] for k in KINDS[:i + 1]) for i in range(len(KINDS))]


def sample(rng, max_len=20):
    """One random sentence pair ``(english, japanese)``, each at most ``max_len`` tokens."""
    while True:
        _, build, mood = rng.choices(KINDS, cum_weights=_CUM)[0]
        pair = build(rng, mood)
        if pair is not None:
            en, ja = pair[0].split(), pair[1].split()
            if len(en) <= max_len and len(ja) <= max_len:
                return " ".join(en), " ".join(ja)
