"""Parallel corpora for the translator: reading small_parallel_enja-style files, and vocabularies.

A corpus directory holds ``{split}.{lang}`` files (``train.en``, ``train.ja``, ``dev.en``, ...):
UTF-8, one sentence per line, tokens separated by single spaces, line ``i`` of the two sides a
translation pair. :func:`load_corpus` reads one, :func:`load_pair` reads two plain files and
:func:`default_corpus` builds the embedded corpus of :mod:`dlhack.corpus.generate` in memory::

    corpus = load_corpus("../shared/data/small_parallel_enja", vocab_size=4096)
    src_ids, tgt_ids = corpus.train[0]                  # int32 arrays, no <s> or <eos>
    corpus.tgt_vocab.decode(tgt_ids)                    # back to tokens

Vocabularies are built from the training split unless given: most frequent words first, ties
alphabetical, so the same data always gives the same ids. A bad file raises :class:`CorpusError`
naming the file, the line, and what was expected there.
"""
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from sys import intern

import numpy as np


class CorpusError(ValueError):
    """A corpus or vocabulary file is not what this module expects (the message says why)."""


class Vocabulary:
    """Words <-> ids, with ``<unk>`` = 0, ``<s>`` = 1 and ``<eos>`` = 2 first.

    Attributes:
        words: the words in id order (``words[0] == "<unk>"``).
        ids: the inverse mapping, word -> id.
    """

    UNK, BOS, EOS = 0, 1, 2
    SPECIALS = ("<unk>", "<s>", "<eos>")

    def __init__(self, words):
        """Make a vocabulary of ``words``, which must start with the three special tokens."""
        self.words = list(words)
        if tuple(self.words[:3]) != self.SPECIALS:
            raise ValueError(f"a vocabulary starts with {self.SPECIALS}, not {self.words[:3]}")
        self.ids = {w: i for i, w in enumerate(self.words)}
        if len(self.ids) != len(self.words):
            raise ValueError("a vocabulary lists each word once")

    @classmethod
    def build(cls, sentences, max_size=None, min_freq=1):
        """Count the words of ``sentences`` (token lists) and keep the most frequent.

        Args:
            sentences: iterable of token lists.
            max_size: the size of the whole vocabulary, special tokens included (None: no cap).
            min_freq: drop words seen fewer times.
        """
        counts = Counter(w for sentence in sentences for w in sentence)
        for special in cls.SPECIALS:
            counts.pop(special, None)
        # most frequent first, ties alphabetical: the same corpus always gives the same ids
        ranked = sorted((w for w, c in counts.items() if c >= min_freq),
                        key=lambda w: (-counts[w], w))
        if max_size is not None:
            ranked = ranked[:max(0, max_size - len(cls.SPECIALS))]
        return cls(cls.SPECIALS + tuple(ranked))

    @classmethod
    def load(cls, path):
        """Read a vocabulary file: one word per line, ``<unk>``, ``<s>``, ``<eos>`` first.

        ``</s>`` is accepted for ``<eos>``, as in small_parallel_enja's ``train.en.vocab.4k``.
        A file that does not start with ``<unk>`` is a plain word list: the specials are added.
        """
        path = Path(path)
        words = [line[0] if len(line) == 1 else _bad_vocab_line(path, i, line)
                 for i, line in enumerate(read_lines(path), 1)]
        if words[0] == "<unk>":
            head = words[:3]
            if len(head) < 3 or head[1] != "<s>" or head[2] not in ("<eos>", "</s>"):
                raise CorpusError(f"{path}: lines 1-3 are {head}; expected <unk>, <s>, and "
                                  "<eos> or </s>")
            words, first_line = list(cls.SPECIALS) + words[3:], 1
        else:  # a plain word list: words[i] is on line i - 2 of the file
            words, first_line = list(cls.SPECIALS) + words, -2
        seen = {}
        for lineno, w in enumerate(words, first_line):
            if w in seen:
                where = "a special token" if seen[w] < 1 else f"already on line {seen[w]}"
                raise CorpusError(f"{path}: line {lineno} repeats {w!r} ({where}); expected "
                                  "each word once")
            seen[w] = lineno
        return cls(words)

    def save(self, path):
        """Write one word per line (``<unk>``, ``<s>``, ``<eos>`` first); :meth:`load` reads it."""
        Path(path).write_text("".join(w + "\n" for w in self.words), encoding="utf-8")

    def encode(self, tokens):
        """Token list -> int32 id array; unknown words become ``UNK``."""
        get = self.ids.get
        return np.array([get(w, self.UNK) for w in tokens], dtype=np.int32)

    def decode(self, ids):
        """Id sequence -> token list, skipping ``<s>`` and stopping at ``<eos>``."""
        tokens = []
        for i in ids:
            i = int(i)
            if i == self.EOS:
                break
            if i != self.BOS:
                tokens.append(self.words[i])
        return tokens

    def __len__(self):
        return len(self.words)

    def __contains__(self, word):
        return word in self.ids

    def __repr__(self):
        return f"Vocabulary({len(self)} words: {' '.join(self.words[3:8])} ...)"


def _bad_vocab_line(path, lineno, tokens):
    raise CorpusError(f"{path}: line {lineno} holds {len(tokens)} tokens; expected one word "
                      "per line")


def _tokens(text):
    """The words of a line, each word one shared string (interned): a corpus kept as tokens then
    costs a pointer per token, not a string (about 50 bytes) each."""
    return [intern(word) for word in text.split()]


def read_lines(path):
    """Read a tokenised text file: one list of tokens per line.

    Raises:
        CorpusError: the file is missing or empty, a line is empty, or a line is not UTF-8
            (the message gives the line number and the byte offset of the bad byte).
    """
    path = Path(path)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise CorpusError(f"{path}: no such file") from None
    if not data.strip():
        raise CorpusError(f"{path}: the file is empty; expected one sentence per line")
    raw_lines = data.split(b"\n")
    if raw_lines[-1] == b"":  # the newline that ends the last line
        raw_lines.pop()
    lines, offset = [], 0
    for lineno, raw in enumerate(raw_lines, 1):
        try:
            text = raw.decode("utf-8")
        except UnicodeDecodeError as e:
            raise CorpusError(f"{path}: line {lineno} is not valid UTF-8 (byte {e.start} of the "
                              f"line, {offset + e.start} of the file: {raw[e.start:e.start + 1]!r})"
                              "; expected UTF-8 text") from None
        tokens = _tokens(text)
        if not tokens:
            raise CorpusError(f"{path}: line {lineno} is empty; expected a sentence of "
                              "space-separated tokens on every line")
        lines.append(tokens)
        offset += len(raw) + 1
    return lines


def read_parallel(src_path, tgt_path):
    """Read two sides of a parallel text into ``[(src_tokens, tgt_tokens), ...]``.

    Raises:
        CorpusError: as :func:`read_lines`, or the two files have different line counts.
    """
    src, tgt = read_lines(src_path), read_lines(tgt_path)
    if len(src) != len(tgt):
        longer = src_path if len(src) > len(tgt) else tgt_path
        raise CorpusError(
            f"{src_path} has {len(src)} lines but {tgt_path} has {len(tgt)}; expected one "
            f"translation per line on both sides (line {min(len(src), len(tgt)) + 1} of "
            f"{longer} has no partner)")
    return list(zip(src, tgt))


@dataclass
class Corpus:
    """Sentence pairs of each split, as id arrays and as tokens, with the two vocabularies.

    Attributes:
        src_vocab, tgt_vocab: :class:`Vocabulary` of each side.
        splits: split name -> ``[(src_ids, tgt_ids), ...]`` int32 arrays without ``<s>``/``<eos>``
            (the model adds them).
        raw: split name -> ``[(src_tokens, tgt_tokens), ...]``, for BLEU references and samples.
    """

    src_vocab: Vocabulary
    tgt_vocab: Vocabulary
    splits: dict = field(default_factory=dict)
    raw: dict = field(default_factory=dict)

    def _split(self, name):
        if name not in self.splits:
            raise KeyError(f"no {name!r} split in this corpus; it has {sorted(self.splits)}")
        return self.splits[name]

    @property
    def train(self):
        return self._split("train")

    @property
    def dev(self):
        return self._split("dev")

    @property
    def test(self):
        return self._split("test")

    def summary(self):
        """One line: pairs per split and the two vocabulary sizes."""
        sizes = ", ".join(f"{name} {len(pairs)}" for name, pairs in self.splits.items())
        return f"{sizes} pairs; vocabularies {len(self.src_vocab)} / {len(self.tgt_vocab)}"


def _vocab(given, sentences, vocab_size):
    if isinstance(given, Vocabulary):
        return given
    if given is not None:
        return Vocabulary.load(given)
    return Vocabulary.build(sentences, max_size=vocab_size)


def from_pairs(raw, vocab_size=None, src_vocab=None, tgt_vocab=None):
    """A :class:`Corpus` from ``{split: [(src_tokens, tgt_tokens), ...]}`` held in memory.

    Vocabularies not given (as :class:`Vocabulary` or a vocabulary file) are built from the
    ``train`` split, capped at ``vocab_size`` words.
    """
    if (src_vocab is None or tgt_vocab is None) and "train" not in raw:
        raise CorpusError(f"no train split to build vocabularies from (splits: {sorted(raw)}); "
                          "pass src_vocab and tgt_vocab")
    train = raw.get("train", [])
    src_vocab = _vocab(src_vocab, (s for s, _ in train), vocab_size)
    tgt_vocab = _vocab(tgt_vocab, (t for _, t in train), vocab_size)
    splits = {name: [(src_vocab.encode(s), tgt_vocab.encode(t)) for s, t in pairs]
              for name, pairs in raw.items()}
    return Corpus(src_vocab, tgt_vocab, splits, dict(raw))


def load_corpus(path, src="en", tgt="ja", splits=("train", "dev", "test"), vocab_size=None,
                src_vocab=None, tgt_vocab=None):
    """Read a small_parallel_enja-style directory of ``{split}.{lang}`` files.

    Args:
        path: the directory.
        src, tgt: the language suffixes.
        splits: the splits to read; each must have both files.
        vocab_size: cap on each built vocabulary, special tokens included (None: every word).
        src_vocab, tgt_vocab: a :class:`Vocabulary` or a vocabulary file to use instead of
            building one from train (e.g. ``path / "train.en.vocab.4k"``). Vocabulary files in
            the directory are not picked up by themselves.

    Raises:
        CorpusError: the directory or a split file is missing, or a file is malformed.
    """
    path = Path(path)
    if not path.is_dir():
        raise CorpusError(f"{path}: no such corpus directory; expected a directory of "
                          "{split}.{lang} files such as train.en and train.ja")
    raw = {}
    for split in splits:
        files = [path / f"{split}.{lang}" for lang in (src, tgt)]
        for f in files:
            if not f.is_file():
                have = ", ".join(sorted(p.name for p in path.iterdir())) or "nothing"
                raise CorpusError(f"{f}: missing split file; expected {split}.{src} and "
                                  f"{split}.{tgt} in {path}, which holds: {have}")
        raw[split] = read_parallel(*files)
    return from_pairs(raw, vocab_size, src_vocab, tgt_vocab)


def load_pair(src_file, tgt_file, split="train", vocab_size=None, src_vocab=None, tgt_vocab=None):
    """Read one pair of plain files (line ``i`` of each a translation pair) as split ``split``."""
    raw = {split: read_parallel(src_file, tgt_file)}
    return from_pairs(raw, vocab_size, src_vocab, tgt_vocab)


def default_corpus(seed=0, n_train=20000, n_dev=500, n_test=500, vocab_size=None):
    """The embedded corpus of :func:`dlhack.corpus.generate.generate`, built in memory (no files)."""
    from dlhack.corpus.generate import generate

    raw = {split: [(_tokens(en), _tokens(ja)) for en, ja in pairs]
           for split, pairs in generate(n_train, n_dev, n_test, seed).items()}
    return from_pairs(raw, vocab_size)
