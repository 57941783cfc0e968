"""Lab 3 (03_convert): the translator trained by one process with Chainer's Trainer.

    python train_single.py --iterations 40
    python train_single.py --gpu --iterations 40      # on GPU 0

The starting point of the conversion: train_mn.py is this script with the ChainerMN edits.
"""
import argparse  # noqa: I001  (dlhack first: it imports Chainer quietly)

import dlhack  # noqa: F401  (imports Chainer quietly)

import chainer
import numpy as np
from chainer import training
from chainer.training import extensions

from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.seq2seq import Seq2seq, convert


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n-train", type=int, default=4000, help="training sentences")
    p.add_argument("--n-dev", type=int, default=240, help="validation sentences")
    p.add_argument("--units", type=int, default=64)
    p.add_argument("--batchsize", type=int, default=32, help="sentences per batch")
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--gpu", action="store_true", help="train on GPU 0 (needs CuPy)")
    p.add_argument("--out", default="result", help="where the log and the snapshot go")
    args = p.parse_args(argv)

    np.random.seed(0)  # the same initial weights on every run
    device = chainer.get_device("@cupy:0" if args.gpu else -1)
    device.use()
    corpus = default_corpus(seed=0, n_train=args.n_train, n_dev=args.n_dev)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=args.units, n_layers=1)
    model.to_device(device)
    optimizer = chainer.optimizers.Adam(alpha=2e-3)
    optimizer.setup(model)
    train, dev = corpus.train, corpus.dev

    train_iter = BucketIterator(train, args.batchsize, seed=0)
    updater = training.StandardUpdater(train_iter, optimizer, converter=convert, device=device)
    trainer = training.Trainer(updater, (args.iterations, "iteration"), out=args.out)
    dev_iter = BucketIterator(dev, 256, shuffle=False, repeat=False)
    evaluator = extensions.Evaluator(dev_iter, model, converter=convert, device=device)
    every = (max(1, args.iterations // 2), "iteration")
    trainer.extend(evaluator, trigger=every)
    trainer.extend(extensions.LogReport(trigger=every))
    trainer.extend(extensions.PrintReport(
        ["iteration", "main/loss", "validation/main/loss", "elapsed_time"]))
    trainer.extend(extensions.snapshot(), trigger=(args.iterations, "iteration"))
    trainer.run()


if __name__ == "__main__":
    main()
