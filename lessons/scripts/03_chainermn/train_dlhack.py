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

from dlhack import parallel as mn  # MN (1) ChainerMN's helpers, written over mpi4py
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
    p.add_argument("--communicator", default="ring")  # MN (1)
    args = p.parse_args(argv)

    comm = mn.create_communicator(args.communicator)  # MN (1) who am I, how many are we
    np.random.seed(0)  # the same initial weights and dropout masks on every run
    device = chainer.get_device(f"@cupy:{comm.intra_rank}" if args.gpu else -1)  # MN (2)
    device.use()
    corpus = default_corpus(seed=0, n_train=args.n_train)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=args.units, n_layers=1)
    model.to_device(device)
    optimizer = mn.create_multi_node_optimizer(chainer.optimizers.Adam(alpha=2e-3), comm)  # MN (3)
    optimizer.setup(model)
    train = mn.scatter_dataset(corpus.train, comm, shuffle=True, seed=0,  # MN (4) my shard
                               equal_length=True)
    dev = mn.scatter_dataset(corpus.dev, comm)  # MN (4) an exact split: each sentence scored once

    train_iter = BucketIterator(train, args.batchsize, seed=0)
    updater = training.StandardUpdater(train_iter, optimizer, converter=convert, device=device)
    trainer = training.Trainer(updater, (args.iterations, "iteration"), out=args.out)
    dev_iter = BucketIterator(dev, 256, shuffle=False, repeat=False)
    evaluator = extensions.Evaluator(dev_iter, model, converter=convert, device=device)
    evaluator = mn.create_multi_node_evaluator(evaluator, comm)  # MN (5) mean over every shard
    every = (max(1, args.iterations // 2), "iteration")
    trainer.extend(evaluator, trigger=every)
    if comm.rank == 0:  # MN (6) only rank 0 reports
        trainer.extend(extensions.LogReport(trigger=every))
        trainer.extend(extensions.PrintReport(
            ["iteration", "main/loss", "validation/main/loss", "elapsed_time"]))
    trainer.run()
    return model


if __name__ == "__main__":
    main()