"""The embedded English->Japanese corpus, generated from a small grammar (lesson 1).

    dlhack data make OUTDIR [-s/--seed N] [-t/--train N] [-d/--dev N] [-T/--test N]

:func:`generate` draws sentences from :mod:`dlhack.corpus.sentences`, built from the word lists
of :mod:`dlhack.corpus.grammar` and rendered in both languages at once: English
subject-verb-object becomes Japanese subject-object-verb with particles, numerals float after
the object ("three apples" -> "りんご を 三 つ"), questions turn polite ("食べ ま し た か ？").
Each English sentence has exactly one Japanese rendering, so a small attention LSTM can learn
the corpus; what it must learn is the reordering and the inflection, not a word-for-word lookup.
Files are tokenised with single spaces like small_parallel_enja (read them with dlhack.corpus).
"""
import argparse
import random
from pathlib import Path

from dlhack.corpus.sentences import sample


def generate(n_train=20000, n_dev=500, n_test=500, seed=0):
    """The embedded corpus: ``{"train": [(en, ja), ...], "dev": [...], "test": [...]}``.

    Sentences are drawn until there are ``n_train + n_dev + n_test`` distinct English ones,
    then shuffled and split, so no dev or test sentence (English or pair) is in train.
    The same seed always gives the same corpus.
    """
    rng = random.Random(seed)
    total, pairs = n_train + n_dev + n_test, {}
    for _ in range(20 * total + 1000):
        if len(pairs) == total:
            break
        en, ja = sample(rng)
        pairs.setdefault(en, ja)
    else:
        raise ValueError(f"the grammar gave only {len(pairs)} distinct sentences, not {total}")
    items = list(pairs.items())
    rng.shuffle(items)
    return {"train": items[:n_train], "dev": items[n_train:n_train + n_dev],
            "test": items[n_train + n_dev:]}


def write_corpus(outdir, seed=0, n_train=20000, n_dev=500, n_test=500):
    """Write train/dev/test ``.en`` and ``.ja`` files (small_parallel_enja format) to ``outdir``.

    Returns ``outdir`` as a :class:`~pathlib.Path`.
    """
    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    for split, pairs in generate(n_train, n_dev, n_test, seed).items():
        for side, lang in enumerate(("en", "ja")):
            text = "".join(pair[side] + "\n" for pair in pairs)
            (outdir / f"{split}.{lang}").write_text(text, encoding="utf-8")
    return outdir


def main(argv=None):
    """``dlhack data make OUTDIR``: write the embedded corpus and print what was written."""
    parser = argparse.ArgumentParser(prog="dlhack data", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    make = sub.add_parser("make", help="write train/dev/test .en/.ja files to OUTDIR")
    make.add_argument("outdir", metavar="OUTDIR", help="directory to write (created if needed)")
    make.add_argument("-s", "--seed", type=int, default=0, help="random seed (default 0)")
    make.add_argument("-t", "--train", type=int, default=20000, help="training pairs (20000)")
    make.add_argument("-d", "--dev", type=int, default=500, help="development pairs (500)")
    make.add_argument("-T", "--test", type=int, default=500, help="test pairs (500)")
    args = parser.parse_args(argv)
    outdir = write_corpus(args.outdir, args.seed, args.train, args.dev, args.test)
    for split in ("train", "dev", "test"):
        sizes = []
        for lang in ("en", "ja"):
            lines = (outdir / f"{split}.{lang}").read_text(encoding="utf-8").splitlines()
            sizes.append(len({w for line in lines for w in line.split()}))
        print(f"{outdir / split}.{{en,ja}}: {len(lines)} pairs, "
              f"{sizes[0]} English and {sizes[1]} Japanese word types")
    return 0
