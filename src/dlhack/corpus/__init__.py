"""The data room: the embedded English->Japanese corpus, the loader for real corpora, batching.

Modules, in reading order:

- ``grammar``     the word lists: nouns, places, adjectives, verbs and what they take, as tables
- ``inflection``  English verb groups, Japanese verb and adjective endings (tense, negation, mood)
- ``phrases``     the lexicon parsed from the tables; noun phrases and predicates in both languages
- ``sentences``   each kind of clause in both languages (SVO -> SOV, particles, questions)
- ``generate``    the embedded corpus, drawn from those sentences (``dlhack data make OUTDIR``)
- ``loader``      small_parallel_enja-format files, vocabularies, the ``Corpus`` they make
- ``batching``    length-bucketed batches that keep data-parallel ranks in step

The loader's names are re-exported here: ``from dlhack.corpus import load_corpus``.
"""
from dlhack.corpus.loader import (
    Corpus,
    CorpusError,
    Vocabulary,
    default_corpus,
    from_pairs,
    load_corpus,
    load_pair,
    read_lines,
    read_parallel,
)

__all__ = ["Corpus", "CorpusError", "Vocabulary", "default_corpus", "from_pairs", "load_corpus",
           "load_pair", "read_lines", "read_parallel"]
