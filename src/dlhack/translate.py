"""Translate tokenised English sentences with a trained model.

    dlhack translate --model result/demo "the big dog ate three apples ."
    echo "i like tea ." | dlhack translate -m result/train

Sentences are split on spaces, as in training (lower-case, punctuation as separate tokens).
"""
import argparse
import sys

from dlhack.evaluation import translate_sentences
from dlhack.report import load_model


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack translate", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--model", required=True,
                   help="training output directory, or its model.npz")
    p.add_argument("sentences", nargs="*", help="sentences (default: one per line on stdin)")
    p.add_argument("--max-length", type=int, default=60)
    args = p.parse_args(argv)
    model, src_vocab, tgt_vocab = load_model(args.model)
    sentences = args.sentences or [line for line in sys.stdin.read().splitlines() if line.strip()]
    for tokens in translate_sentences(model, sentences, src_vocab, tgt_vocab,
                                      max_length=args.max_length):
        print(" ".join(tokens))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
