"""Translate English sentences with a trained model.

    make demo                                             # trains one, writes result/demo
    dlhack translate --model result/demo "Did John hate bread?"
    echo "I can't tell who will arrive first." | dlhack translate -m result/train

Input is written the way the corpus is (:func:`tokenize`): lower-case, punctuation and the
apostrophe part of contractions split off as tokens of their own ("can't" -> "can 't"), so raw
text and already tokenised text give the same translation. Words the model never saw are named
on stderr: they reach the model as ``<unk>``, and the translation is then a guess.
"""
import argparse
import re
import sys
from pathlib import Path

# A number, a word, the apostrophe part of a contraction ("can't" -> "can 't", also when already
# split that way), or one other symbol.
TOKEN = re.compile(r"\d+(?:[.,]\d+)*|[^\W\d_]+(?:-[^\W\d_]+)*"
                   r"|(?<=[^\W\d_])'[^\W\d_]+|'(?:t|s|m|d|ll|ve|re|clock)\b|[^\w\s]")
QUOTES = str.maketrans({"\u2019": "'", "\u2018": "'", "\u201c": '"', "\u201d": '"'})


def tokenize(text):
    """Split English ``text`` into corpus tokens: ``"I'm Ken."`` -> ``["i", "'m", "ken", "."]``."""
    return TOKEN.findall(text.translate(QUOTES).lower())


def unknown_words(tokens, vocab):
    """The words of ``tokens`` missing from ``vocab``, each once, in order."""
    return list(dict.fromkeys(w for w in tokens if w not in vocab))


class ModelMissing(Exception):
    """No trained model at the given path; the message says how to make one."""


def load(path):
    """``report.load_model(path)``, with a one-line explanation when there is no model there."""
    from dlhack.report import load_model

    path = Path(path)
    directory = path if path.is_dir() or path.suffix != ".npz" else path.parent
    needed = [directory / "model.json", directory / "model.npz"]
    missing = [str(p) for p in needed if not p.is_file()]
    if missing:
        raise ModelMissing(
            f"no trained model at {path} ({' and '.join(missing)} not found). Train one first: "
            f"`make demo` writes result/demo, `dlhack train --out {directory}` writes "
            f"{directory}; then pass that folder to --model.")
    return load_model(path)


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack translate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model", required=True,
                   help="training output directory (e.g. result/demo), or its model.npz")
    p.add_argument("sentences", nargs="*", help="sentences (default: one per line on stdin)")
    p.add_argument("--max-length", type=int, default=60,
                   help="longest translation, in tokens (default 60)")
    args = p.parse_args(argv)
    try:
        model, src_vocab, tgt_vocab = load(args.model)
    except ModelMissing as err:
        print(f"dlhack translate: {err}", file=sys.stderr)
        return 1
    from dlhack.evaluation import translate_sentences

    sentences = args.sentences or [line for line in sys.stdin.read().splitlines() if line.strip()]
    tokens = [tokenize(s) for s in sentences]
    for raw, words in zip(sentences, tokens):
        unknown = unknown_words(words, src_vocab)
        if unknown:
            print(f"dlhack translate: not in the model's vocabulary, so read as <unk>: "
                  f"{', '.join(map(repr, unknown))} (in {raw!r})", file=sys.stderr)
    for out in translate_sentences(model, tokens, src_vocab, tgt_vocab,
                                   max_length=args.max_length):
        print(" ".join(out))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
