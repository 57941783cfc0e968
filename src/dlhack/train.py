"""Train the translator with Chainer's Trainer: one process, or data-parallel under mpiexec.

    dlhack train                                      # embedded corpus, one process (1 rank)
    mpiexec -n 2 dlhack train                         # data-parallel on 2 ranks (ring allreduce)
    mpiexec -n 2 dlhack train --communicator chainermn:naive
    dlhack train --corpus ../shared/data/small_parallel_enja --units 256 --layers 3
    dlhack train --gpu                                # rank r uses GPU intra_rank

The data-parallel part is a handful of lines, marked ``# MN:`` (lesson 3 shows them as a diff):
create a communicator, pick the device from ``intra_rank``, wrap the optimizer, scatter the
dataset, make evaluation multi-node, and keep reporting on rank 0. ``--batchsize`` is per rank,
so the effective batch is batchsize x ranks. One process is simply a job of one rank: the same
lines run, with a communicator of size one, so there is no separate single-process path.
"""
import argparse
import dataclasses
import time

import chainer
import numpy as np
from chainer.training import extensions

from dlhack import profile, report
from dlhack.corpus.batching import BucketIterator
from dlhack.evaluation import BleuEvaluator, bleu_of, translate_ids
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel import (
    create_communicator,
    create_multi_node_evaluator,
    create_multi_node_optimizer,
    scatter_dataset,
)
from dlhack.parallel.scatter import permutation, shard_indices
from dlhack.profile import ProfilingUpdater, TimedUpdater


@dataclasses.dataclass
class TrainConfig:
    """Every setting of a training run. Flat on purpose: one line each on the command line."""

    corpus: str = None         # small_parallel_enja-style directory; None = the embedded corpus
    n_train: int = 20000       # embedded corpus: training pairs
    vocab_size: int = None     # cap on each vocabulary (real corpora); None = every train word
    units: int = 128           # 128 units learns the embedded grammar in minutes on a CPU
    layers: int = 2
    dropout: float = 0.1
    attention: bool = True
    impl: str = "fast"         # "nstep" = Chainer's NStepLSTM, the slow reference
    batchsize: int = 64        # per rank
    epochs: float = 8
    iterations: int = None     # stop after this many iterations instead (throughput probes)
    minutes: float = None      # also stop once this much time has passed (benchmarks)
    lr: float = 2e-3           # Adam's alpha
    seed: int = 0
    out: str = "result/train"
    gpu: bool = False
    communicator: str = "auto"  # auto: "ring" over mpiexec's ranks (size one without it)
    eval_every: float = 1      # epochs between dev-set evaluations (0: only at the end)
    n_eval: int = 500          # dev/test sentences scored for BLEU
    snapshot_every: int = 0    # iterations between snapshots (0: none)
    resume: str = None         # snapshot file to resume from ("auto": the newest in OUT)
    max_length: int = 60
    progress: bool = True
    json: str = None           # metrics file (default OUT/metrics.json)
    profile: bool = False      # per-rank time breakdown (dlhack.profile)
    overlap: bool = False      # allreduce gradient buckets during backward (lesson 9)
    gc_every: int = 50         # collect garbage every N steps on every rank at once (0: Python's
                               # own collector, whose pauses make the other ranks wait)
    shard: str = None          # "R/K", one process: train on rank R's shard of a K-rank job
                               # (the same batches: the benchmark's compute-only ceiling)


class TimeLimit:
    """Stop trigger: the usual epoch/iteration limit, or ``minutes`` of training, whichever
    comes first. Rank 0's clock decides, every 10 iterations, so all ranks stop together."""

    def __init__(self, limit, minutes, comm):
        self.limit = chainer.training.get_trigger(limit)
        self.seconds, self.comm = 60 * minutes, comm
        self.start = time.perf_counter()

    def get_training_length(self):
        return self.limit.get_training_length()

    def __call__(self, trainer):
        if self.limit(trainer):
            return True
        if trainer.updater.iteration % 10:
            return False
        late = time.perf_counter() - self.start > self.seconds
        return self.comm.bcast_obj(late)


def make_communicator(name):
    """The communicator for ``--communicator``: ``"auto"`` is ``"ring"`` over every rank
    mpiexec started (size one without mpiexec); ``"none"`` is this process alone, a
    communicator of size one even under mpiexec."""
    if name in ("none", None):
        from mpi4py import MPI

        return create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    return create_communicator("ring" if name == "auto" else name)


def load_data(config, comm):
    """Rank 0 reads the corpus; vocabularies go to every rank, sentences are scattered."""
    from dlhack.corpus import default_corpus, load_corpus

    root = comm.rank == 0
    corpus = None
    if root:
        if config.corpus:
            corpus = load_corpus(config.corpus, vocab_size=config.vocab_size)
        else:
            corpus = default_corpus(seed=config.seed, n_train=config.n_train)

    def held_out(split):  # ((src_ids, tgt_ids), reference tokens) for BLEU
        return list(zip(corpus.splits[split], (t for _, t in corpus.raw[split])))[:config.n_eval]

    train = corpus.train if root else None
    dev = held_out("dev") if root else None
    test = held_out("test") if root else None
    vocabs, n_held_out = comm.bcast_obj(
        ((corpus.src_vocab, corpus.tgt_vocab), min(len(dev), len(test))) if root else None)
    if n_held_out < comm.size:  # every rank raises together: none is left waiting in a collective
        raise ValueError(f"{n_held_out} dev/test sentences for {comm.size} ranks: every rank "
                         f"needs at least one to evaluate; raise --n-eval to {comm.size} or more")
    if config.shard:  # one process, doing what rank R of a K-rank job does (no MPI in steps)
        train = shard_of(train, config.shard, config.seed, comm)
    # Equal lengths keep every rank's iteration count in step.
    train = scatter_dataset(train, comm, shuffle=not config.shard, seed=config.seed,  # MN: shards
                            equal_length=True)
    dev = scatter_dataset(dev, comm)    # exact partitions: each sentence scored once
    test = scatter_dataset(test, comm)
    return vocabs, list(train), list(dev), list(test)


def shard_of(train, shard, seed, comm):
    """``train`` cut to the shard rank R of a K-rank job trains on (``shard`` = "R/K"), in
    the order ``scatter_dataset`` deals it; only for a job of one process."""
    rank, size = map(int, shard.split("/"))
    if comm.size != 1 or not 0 <= rank < size:
        raise ValueError(f"--shard {shard}: one process only, with 0 <= R < K")
    order = permutation(len(train), shuffle=True, seed=seed)
    return [train[i] for i in shard_indices(len(train), size, rank, order, equal_length=True)]


def train(config, comm=None):
    """Train a translator; returns the metrics dict (the same on every rank).

    Args:
        config: a ``TrainConfig``.
        comm: a communicator (``dlhack.parallel`` or ChainerMN); by default made from
            ``config.communicator``.
    """
    comm = comm or make_communicator(config.communicator)  # MN: every rank; alone: size 1
    device = chainer.get_device(-1)
    if config.gpu:  # MN: one GPU per rank on a node; set it before any array is created
        device = chainer.get_device(f"@cupy:{comm.intra_rank}")
    device.use()
    np.random.seed(config.seed)
    (src_vocab, tgt_vocab), train_data, dev, test = load_data(config, comm)

    model = Seq2seq(len(src_vocab), len(tgt_vocab), n_units=config.units,
                    n_layers=config.layers, dropout=config.dropout,
                    attention=config.attention, impl=config.impl)
    model.to_device(device)
    optimizer = chainer.optimizers.Adam(alpha=config.lr)
    optimizer = create_multi_node_optimizer(optimizer, comm,  # MN: average gradients first
                                            overlap=config.overlap)
    optimizer.setup(model)

    it = BucketIterator(train_data, config.batchsize, seed=config.seed)
    if config.profile:  # the same step, timed phase by phase
        updater = ProfilingUpdater(it, optimizer, comm, converter=convert, device=device)
    else:
        updater = TimedUpdater(it, optimizer, converter=convert, device=device)
    updater.collect_every(config.gc_every)
    stop = (config.iterations, "iteration") if config.iterations else (config.epochs, "epoch")
    if config.minutes:
        stop = TimeLimit(stop, config.minutes, comm)
    trainer = chainer.training.Trainer(updater, stop, out=config.out)
    if config.eval_every and dev:
        eval_trigger = (config.eval_every, "epoch")
        dev_iter = BucketIterator(dev_pairs(dev), 256, shuffle=False, repeat=False)
        loss_eval = extensions.Evaluator(dev_iter, model, converter=convert, device=device)
        loss_eval = create_multi_node_evaluator(loss_eval, comm)  # MN: mean over all shards
        trainer.extend(loss_eval, trigger=eval_trigger, name="validation")
        bleu_eval = BleuEvaluator(model, dev, tgt_vocab, comm, max_length=config.max_length)
        trainer.extend(bleu_eval, trigger=eval_trigger)
    if config.snapshot_every or config.resume:
        from dlhack.snapshot import attach_snapshots

        attach_snapshots(trainer, comm, config.snapshot_every, resume=config.resume)
    if comm.rank == 0:  # MN: reporting, plots and files on rank 0 only
        report.attach(trainer, config, progress=config.progress)

    start = time.perf_counter()
    trainer.run()
    seconds = time.perf_counter() - start
    sentences = round(it.epoch_detail * len(train_data)) * comm.size

    bleu = bleu_of(model, test, tgt_vocab, comm, max_length=config.max_length)
    metrics = {
        "bleu": bleu,
        "bleu_tokenization": "sacrebleu corpus BLEU, tokenize='none' on the corpus tokens",
        "sentences_per_sec": updater.throughput(sentences),
        "ranks": comm.size,
        "epochs": it.epoch_detail,
        "iterations": updater.iteration,
        "seconds": seconds,
        "train_seconds": updater.elapsed,  # timed steps only: no warm-up, no evaluation
        "batchsize": config.batchsize,
        "global_batchsize": config.batchsize * comm.size,
        "communicator": getattr(comm, "name", config.communicator),  # ours have a name
        "impl": config.impl,
        "units": config.units,
        "layers": config.layers,
    }
    if config.profile:
        metrics["profile"] = updater.summary()
        metrics["verdict"] = profile.verdict(metrics["profile"], batchsize=config.batchsize)
        if comm.rank == 0:
            print(profile.format_breakdown(metrics["profile"]))
            print(metrics["verdict"])
    if comm.rank == 0:
        sources = [pair[0] for pair, _ in test[:5]]
        metrics["samples"] = [
            {"source": " ".join(src_vocab.decode(x)), "reference": " ".join(ref),
             "translation": " ".join(tgt_vocab.decode(y))}
            for x, (_, ref), y in zip(sources, test[:5], translate_ids(model, sources))]
        report.finish(trainer, model, config, metrics, src_vocab, tgt_vocab)
    return metrics


def dev_pairs(examples):
    """The (src, tgt) pairs of ((src, tgt), reference) examples."""
    return [pair for pair, _ in examples]


def build_parser():
    p = argparse.ArgumentParser(prog="dlhack train", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    d = TrainConfig()
    p.add_argument("-c", "--corpus", help="small_parallel_enja-style directory "
                   "(default: the embedded corpus)")
    p.add_argument("--n-train", type=int, default=d.n_train, help="embedded corpus size")
    p.add_argument("--vocab-size", type=int, help="cap on each vocabulary")
    p.add_argument("-u", "--units", type=int, default=d.units)
    p.add_argument("-l", "--layers", type=int, default=d.layers)
    p.add_argument("--dropout", type=float, default=d.dropout)
    p.add_argument("--no-attention", dest="attention", action="store_false")
    p.add_argument("--impl", choices=["fast", "nstep"], default=d.impl,
                   help="LSTM formulation (nstep: Chainer's NStepLSTM reference)")
    p.add_argument("-b", "--batchsize", type=int, default=d.batchsize, help="per rank")
    p.add_argument("-e", "--epochs", type=float, default=d.epochs)
    p.add_argument("-i", "--iterations", type=int, help="stop after N iterations instead")
    p.add_argument("--minutes", type=float, help="also stop after this many minutes")
    p.add_argument("--lr", type=float, default=d.lr, help="Adam's alpha")
    p.add_argument("-s", "--seed", type=int, default=d.seed)
    p.add_argument("-o", "--out", default=d.out)
    p.add_argument("-g", "--gpu", action="store_true", help="rank r uses GPU intra_rank")
    p.add_argument("--communicator", default=d.communicator,
                   help="auto (ring over mpiexec's ranks) | none (this process alone) | naive | "
                        "ring | mpi | chainermn:naive | chainermn:flat | chainermn:pure_nccl")
    p.add_argument("--eval-every", type=float, default=d.eval_every,
                   help="epochs between dev evaluations (0: none)")
    p.add_argument("--n-eval", type=int, default=d.n_eval, help="dev/test sentences to score")
    p.add_argument("--snapshot-every", type=int, default=d.snapshot_every,
                   help="iterations between snapshots (0: none)")
    p.add_argument("--resume", help="snapshot to resume from ('auto': the newest in OUT)")
    p.add_argument("--max-length", type=int, default=d.max_length)
    p.add_argument("--no-progress", dest="progress", action="store_false")
    p.add_argument("--json", help="metrics file (default OUT/metrics.json)")
    p.add_argument("--profile", action="store_true", help="per-rank time breakdown")
    p.add_argument("--overlap", action="store_true",
                   help="allreduce the gradients in buckets while backward runs")
    p.add_argument("--shard", metavar="R/K", help="one process: train on rank R's shard of a "
                   "K-rank job (what dlhack bench scaling runs side by side as its ceiling)")
    p.add_argument("--gc-every", type=int, default=d.gc_every,
                   help="collect garbage every N steps, on every rank at once (0: Python decides)")
    return p


def main(argv=None):
    args = build_parser().parse_args(argv)
    config = TrainConfig(**vars(args))
    train(config)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

