"""Why data-parallel ranks wait for each other: uneven work per step, or a jittery core?

    dlhack bench balance                         # 2 ranks, batch 64, demo model
    dlhack bench balance --ranks 2 3 --units 256 --layers 3

Two causes make the ranks of a synchronous step finish apart, and this measures both on one
process, with no MPI:

- work: at each step of an epoch, the work each rank's batch holds, as ``dlhack train`` deals
  it (``scatter_dataset`` shards, each bucketed by ``BucketIterator`` with the same seed) and
  as ``BalancedIterator`` deals it (one global batch per step, split by tokens). Work is
  counted two ways: real tokens (what the fused, packed model computes) and padded cells,
  batch x (longest source + longest target + 1) (what ``Seq2seq`` computes). If a step's time
  follows its work, the average rank waits ``(max - mean) / max`` of each step.
- jitter: one process trains on the same batch again and again, readable and fused; the
  spread of its step times is the core's own noise (by CPU time) plus what other processes
  take from it (by wall clock). Two ranks with independent noise of standard deviation s wait
  about ``s / sqrt(pi)`` per step (the mean gap to the slower of two normal draws).

Costs: the work counts are arithmetic on lengths; the jitter takes ``--jitter-steps`` steps.
"""
import argparse
import time

import numpy as np

from dlhack.corpus.batching import BalancedIterator, BucketIterator
from dlhack.parallel.scatter import permutation, shard_indices


def work(batch):
    """(real tokens, padded cells) of one batch of (src, tgt) pairs."""
    src, tgt = [len(x) for x, _ in batch], [len(y) + 1 for _, y in batch]
    return sum(src) + sum(tgt), len(batch) * (max(src) + max(tgt))


def per_step_work(iterators, steps):
    """(steps, ranks, 2) array: each rank's work at each step."""
    return np.array([[work(it.next()) for it in iterators] for _ in range(steps)], float)


def train_iterators(train, batchsize, size, seed=0):
    """What ``dlhack train`` gives each rank: its shard, bucketed with the common seed."""
    order = permutation(len(train), shuffle=True, seed=seed)
    shards = [[train[i] for i in shard_indices(len(train), size, r, order, equal_length=True)]
              for r in range(size)]
    return [BucketIterator(shard, batchsize, seed=seed) for shard in shards]


def balanced_iterators(train, batchsize, size, seed=0):
    return [BalancedIterator(train, batchsize, size, r, seed=seed) for r in range(size)]


def wait_fraction(w):
    """Mean over steps of (max - mean) / max over ranks, for each work measure."""
    top = w.max(axis=1)
    return ((top - w.mean(axis=1)) / top).mean(axis=0)


def jitter(train, batchsize, units, layers, steps, impl):
    """``(wall, cpu, ms)``: the coefficients of variation of one batch's step time by wall clock
    and by this process's CPU time, and the mean ms per step, for ``impl`` (readable, fused)."""
    import chainer

    from dlhack.model.fused import FusedSeq2seq
    from dlhack.model.packed_adam import PackedAdam
    from dlhack.model.seq2seq import Seq2seq

    np.random.seed(0)
    vocab = 1 + max(max(max(x, default=0), max(y, default=0)) for x, y in train)
    cls, opt = (FusedSeq2seq, PackedAdam) if impl == "fused" else (Seq2seq,
                                                                    chainer.optimizers.Adam)
    model = cls(vocab, vocab, n_units=units, n_layers=layers)
    optimizer = opt()
    optimizer.setup(model)
    batch = BucketIterator(train, batchsize, seed=0).next()
    xs, ys = [x for x, _ in batch], [y for _, y in batch]
    wall, cpu = [], []
    for k in range(steps + 2):
        start, start_cpu = time.perf_counter(), time.process_time()
        optimizer.update(model, xs, ys)
        if k >= 2:
            wall.append(time.perf_counter() - start)
            cpu.append(time.process_time() - start_cpu)
    wall, cpu = np.array(wall), np.array(cpu)
    return wall.std() / wall.mean(), cpu.std() / cpu.mean(), 1000 * wall.mean()


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack bench balance", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--ranks", type=int, nargs="+", default=[2])
    p.add_argument("-b", "--batchsize", type=int, default=64, help="per rank")
    p.add_argument("-u", "--units", type=int, default=128)
    p.add_argument("-l", "--layers", type=int, default=2)
    p.add_argument("-c", "--corpus", help="corpus directory (default: embedded)")
    p.add_argument("-j", "--jitter-steps", type=int, default=30,
                   help="steps on one batch for the jitter (0: skip)")
    args = p.parse_args(argv)
    from dlhack.corpus import default_corpus, load_corpus

    data = load_corpus(args.corpus) if args.corpus else default_corpus(seed=0)
    print(f"corpus: {args.corpus or 'embedded'}, {len(data.train)} pairs, batch "
          f"{args.batchsize} per rank; work per step as each rank's batch holds it")
    print(f"{'ranks':>5} {'dealt by':>22} {'steps':>6} {'token spread':>13} "
          f"{'cell spread':>12} {'wait (tokens)':>14} {'wait (cells)':>13}")
    for size in args.ranks:
        epoch = len(data.train) // (size * args.batchsize)
        for name, make in (("dlhack train (shards)", train_iterators),
                           ("BalancedIterator", balanced_iterators)):
            w = per_step_work(make(data.train, args.batchsize, size), epoch)
            spread = (w.max(axis=1) / w.min(axis=1) - 1).mean(axis=0)
            wait = wait_fraction(w)
            print(f"{size:>5} {name:>22} {epoch:>6} {spread[0]:>13.1%} {spread[1]:>12.1%} "
                  f"{wait[0]:>14.1%} {wait[1]:>13.1%}")
    if args.jitter_steps:
        print(f"\njitter: one process, one batch, {args.jitter_steps} steps, {args.units} units "
              f"x {args.layers} layers; standard deviation of a step, by wall clock and by CPU "
              f"time (what other processes' time slices add is the difference)")
        for impl in ("readable", "fused"):
            wall, cpu, ms = jitter(data.train, args.batchsize, args.units, args.layers,
                                   args.jitter_steps, impl)
            print(f"{impl:>10}: {ms:6.1f} ms per step; wall {wall:6.1%}, CPU {cpu:6.1%}; two "
                  f"ranks with such noise wait about {wall / np.sqrt(np.pi):.1%} of a step "
                  f"(CPU: {cpu / np.sqrt(np.pi):.1%})")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
