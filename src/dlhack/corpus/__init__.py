"""The data room: the embedded English->Japanese corpus, the loader for real corpora, batching.

Modules, in reading order:

- ``grammar``   English and Japanese sentence frames (SVO -> SOV, particles, tense, negation)
- ``phrases``   the words and phrases the frames are filled with
- ``generate``  the embedded corpus, generated from the grammar (``dlhack data make OUTDIR``)
- ``loader``    small_parallel_enja-format files, vocabularies, the ``Corpus`` they make
- ``batching``  length-bucketed batches that keep data-parallel ranks in step

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
