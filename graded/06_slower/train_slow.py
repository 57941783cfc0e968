"""Lab 6 (06_slower): the translator, converted to ChainerMN, and slower at 2 ranks than at 1.

    mpiexec -n 2 python train_slow.py --iterations 40
    mpiexec -n 2 python train_slow.py --gpu --iterations 40   # one GPU per rank, NCCL

It trains, it reports, its BLEU is fine: every edit of lab 3 seems to be there. Yet two ranks
take longer than one. Find out why (dlhack run, dlhack train --profile) and fix it.
"""
import os

os.environ["OMP_NUM_THREADS"] = str(os.cpu_count())  # use every core of the machine
os.environ["OPENBLAS_NUM_THREADS"] = str(os.cpu_count())

import argparse  # noqa: I001  (after the thread settings: numpy reads them at import)

import dlhack  # noqa: F401  (imports Chainer quietly)

import chainer
import chainermn
import numpy as np
from chainer import training
from chainer.training import extensions

from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.evaluation import bleu_of
from dlhack.model.seq2seq import Seq2seq, convert


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("--n-train", type=int, default=4000, help="training sentences")
    p.add_argument("--n-dev", type=int, default=240, help="validation sentences")
    p.add_argument("--n-test", type=int, default=240, help="BLEU sentences")
    p.add_argument("--units", type=int, default=64)
    p.add_argument("--batchsize", type=int, default=32, help="sentences per batch, per rank")
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--gpu", action="store_true", help="one GPU per rank (needs CuPy and NCCL)")
    p.add_argument("--out", default="result", help="where the log and the snapshot go")
    args = p.parse_args(argv)

    chainer.get_device("@cupy:0" if args.gpu else -1).use()  # kept from train_single.py
    comm = chainermn.create_communicator("pure_nccl" if args.gpu else "naive")
    np.random.seed(0)
    device = chainer.get_device(f"@cupy:{comm.intra_rank}" if args.gpu else -1)
    device.use()
    corpus = default_corpus(seed=0, n_train=args.n_train, n_dev=args.n_dev, n_test=args.n_test)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=args.units, n_layers=1)
    model.to_device(device)
    optimizer = chainermn.create_multi_node_optimizer(chainer.optimizers.Adam(alpha=2e-3), comm)
    optimizer.setup(model)
    train = corpus.train  # every rank shuffles it its own way (seed=comm.rank below)

    # The same effective batch as one process: the per-rank batch divided by the rank count.
    train_iter = BucketIterator(train, max(1, args.batchsize // comm.size), seed=comm.rank)
    updater = training.StandardUpdater(train_iter, optimizer, converter=convert, device=device)
    trainer = training.Trainer(updater, (args.iterations, "iteration"), out=args.out)
    dev_iter = BucketIterator(corpus.dev, 256, shuffle=False, repeat=False)
    evaluator = extensions.Evaluator(dev_iter, model, converter=convert, device=device)
    every = (max(1, args.iterations // 2), "iteration")
    trainer.extend(evaluator, trigger=every)
    if comm.rank == 0:
        trainer.extend(extensions.LogReport(trigger=every))
        trainer.extend(extensions.PrintReport(
            ["iteration", "main/loss", "validation/main/loss", "elapsed_time"]))
        trainer.extend(extensions.snapshot(), trigger=(args.iterations, "iteration"))
    trainer.run()

    test = list(zip(corpus.test, (tgt for _, tgt in corpus.raw["test"])))  # (pair, reference)
    bleu = bleu_of(model, test, corpus.tgt_vocab, max_length=20)
    if comm.rank == 0:
        print(f"test BLEU {bleu:.2f}")


if __name__ == "__main__":
    main()
