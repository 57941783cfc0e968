"""``dlhack train`` plus the two flags only benchmarks use: ``--shard R/K`` and ``--minutes M``.

    python -m dlhack.bench.training --shard 1/2 --communicator none --epochs 1   # scaling's ceiling
    mpiexec -n 2 python -m dlhack.bench.training --minutes 25 --corpus DIR       # bench corpus

Every other flag is ``dlhack train``'s: this parser is train's, with two flags added.

- ``--shard R/K``: one process trains alone on the samples rank R of a K-rank job trains on, in
  the same order: the same batches, the same number of steps, and no MPI in a step. K such
  processes side by side are ``dlhack bench scaling``'s compute-only ceiling. With ``--balance``
  it trains rank R's share, by tokens, of every global batch instead.
- ``--minutes M``: stop at the usual epochs or iterations, or after M minutes of training,
  whichever comes first (``dlhack bench corpus``). Rank 0's clock decides, every 10 steps.

Cost: nothing in a step, bar one broadcast of a bool every 10 steps under ``--minutes``.
"""
import time
from functools import partial

import chainer

from dlhack.parallel.scatter import shard_indices
from dlhack.train import (
    TrainConfig,
    build_parser,
    load_data,
    make_communicator,
    stop_trigger,
    train,
)


class TimeLimit:
    """Stop trigger: ``limit`` (epochs or iterations), or ``minutes`` of training, whichever
    comes first. Rank 0's clock decides, every 10 iterations, so all ranks stop together; the
    clock starts at the first check, when training starts."""

    def __init__(self, limit, minutes, comm):
        self.limit = chainer.training.get_trigger(limit)
        self.seconds, self.comm = 60 * minutes, comm
        self.start = None

    def get_training_length(self):
        return self.limit.get_training_length()

    def __call__(self, trainer):
        if self.start is None:
            self.start = time.perf_counter()
        if self.limit(trainer):
            return True
        if trainer.updater.iteration % 10:
            return False
        late = time.perf_counter() - self.start > self.seconds
        return self.comm.bcast_obj(late)


def load_shard(config, comm, shard):
    """``load_data``, with the training split cut to rank R's shard of a K-rank job
    (``shard`` = "R/K"); for a job of one process only."""
    rank, size = map(int, shard.split("/"))
    if comm.size != 1 or not 0 <= rank < size:
        raise ValueError(f"--shard {shard}: one process only, with 0 <= R < K")
    vocabs, train_data, dev, test = load_data(config, comm)
    # One rank holds every sample, in the order the seed deals them; rank R of K takes its cut
    # of that same order (parallel/scatter.py), wrapping round as an equal-length shard does.
    mine = shard_indices(len(train_data), size, rank, equal_length=True)
    return vocabs, [train_data[i] for i in mine], dev, test


def build_bench_parser():
    """``dlhack train``'s parser, with ``--shard`` and ``--minutes``."""
    parser = build_parser()
    parser.prog, parser.description = "python -m dlhack.bench.training", __doc__
    parser.add_argument("--shard", metavar="R/K", help="one process: train alone on rank R's "
                        "shard of a K-rank job (dlhack bench scaling's ceiling)")
    parser.add_argument("--minutes", type=float,
                        help="also stop after this many minutes of training (dlhack bench corpus)")
    return parser


def main(argv=None):
    args = vars(build_bench_parser().parse_args(argv))
    shard, minutes = args.pop("shard"), args.pop("minutes")
    config = TrainConfig(**args)
    comm = make_communicator(config.communicator)
    load, share = load_data, None
    if shard and config.balance:  # every global batch is planned; train rank R's share of it
        share = tuple(map(int, shard.split("/")))
    elif shard:
        load = partial(load_shard, shard=shard)
    stop = TimeLimit(stop_trigger(config), minutes, comm) if minutes else None
    train(config, comm, load=load, stop=stop, share=share)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
