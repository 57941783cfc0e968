"""Lesson 3: the translator trained in one process (train_single.py), or data-parallel with
six edits, each marked # MN: with ChainerMN itself (train_chainermn.py) or with the course's
dlhack.parallel (train_dlhack.py).

    python train_single.py --iterations 40
    mpiexec -n 2 python train_chainermn.py --iterations 40       # ChainerMN, communicator naive
    mpiexec -n 2 python train_dlhack.py --iterations 40          # dlhack.parallel, ring
"""
import argparse  # noqa: I001  (dlhack must come before chainer: it silences its warnings)

import dlhack  # noqa: F401  (imports Chainer quietly)

import chainer
import numpy as np
from chainer import training
from chainer.training import extensions

from dlhack.corpus.batching import BucketIterator
from dlhack.corpus import default_corpus
from dlhack.model.seq2seq import Seq2seq, convert


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n-train", type=int, default=4000)
    p.add_argument("--units", type=int, default=64)
    p.add_argument("--batchsize", type=int, default=32)
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--gpu", action="store_true")
    p.add_argument("--out", default="result")
    args = p.parse_args(argv)

    np.random.seed(0)  # the same initial weights and dropout masks on every run
    device = chainer.get_device("@cupy:0" if args.gpu else -1)
    device.use()
    corpus = default_corpus(seed=0, n_train=args.n_train)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=args.units, n_layers=1)
    model.to_device(device)
    optimizer = chainer.optimizers.Adam(alpha=2e-3)
    optimizer.setup(model)
    train = corpus.train
    dev = corpus.dev

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
    trainer.run()
    return model


if __name__ == "__main__":
    main()