# MUTANT: the Evaluator is not wrapped: each rank reports its own shard's loss
# EXPECT: edit (5), the multi-node evaluator
%%writefile train_mn.py
"""Lab 3 (03_convert): the translator trained data-parallel with ChainerMN.

    mpiexec -n 2 python train_mn.py --iterations 40
    mpiexec -n 2 python train_mn.py --gpu --iterations 40   # one GPU per rank, NCCL

train_single.py with the six ChainerMN edits, each marked # MN.
"""
import argparse

import dlhack  # noqa: F401  (imports Chainer quietly)

import chainer
import chainermn  # MN (1)
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
    p.add_argument("--batchsize", type=int, default=32, help="sentences per batch, per rank")
    p.add_argument("--iterations", type=int, default=40)
    p.add_argument("--gpu", action="store_true", help="one GPU per rank (needs CuPy and NCCL)")
    p.add_argument("--out", default="result", help="where the log and the snapshot go")
    args = p.parse_args(argv)

    # MN (1) first: the communicator says which GPU of the node is this rank's.
    comm = chainermn.create_communicator("pure_nccl" if args.gpu else "naive")
    np.random.seed(0)
    device = chainer.get_device(f"@cupy:{comm.intra_rank}" if args.gpu else -1)  # MN (2)
    device.use()
    corpus = default_corpus(seed=0, n_train=args.n_train, n_dev=args.n_dev)
    model = Seq2seq(len(corpus.src_vocab), len(corpus.tgt_vocab), n_units=args.units, n_layers=1)
    model.to_device(device)
    # MN (3) broadcasts rank 0's weights at the first update, then averages every gradient.
    optimizer = chainermn.create_multi_node_optimizer(chainer.optimizers.Adam(alpha=2e-3), comm)
    optimizer.setup(model)
    # MN (4) each rank its shard; equal lengths (a few sentences twice), so that every rank
    # runs the same number of iterations per epoch.
    train = chainermn.scatter_dataset(corpus.train, comm, shuffle=True, seed=0)
    dev = chainermn.scatter_dataset(corpus.dev, comm)

    train_iter = BucketIterator(train, args.batchsize, seed=0)
    updater = training.StandardUpdater(train_iter, optimizer, converter=convert, device=device)
    trainer = training.Trainer(updater, (args.iterations, "iteration"), out=args.out)
    dev_iter = BucketIterator(dev, 256, shuffle=False, repeat=False)
    evaluator = extensions.Evaluator(dev_iter, model, converter=convert, device=device)
    every = (max(1, args.iterations // 2), "iteration")
    trainer.extend(evaluator, trigger=every)
    if comm.rank == 0:  # MN (6) one log, one table, one snapshot
        trainer.extend(extensions.LogReport(trigger=every))
        trainer.extend(extensions.PrintReport(
            ["iteration", "main/loss", "validation/main/loss", "elapsed_time"]))
        trainer.extend(extensions.snapshot(), trigger=(args.iterations, "iteration"))
    trainer.run()


if __name__ == "__main__":
    main()
