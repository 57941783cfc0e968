"""Train the translator with Chainer's Trainer: one process, or data-parallel under mpiexec.

    dlhack train                                      # embedded corpus, one process (1 rank)
    mpiexec -n 2 dlhack train                         # data-parallel on 2 ranks (ring allreduce)
    mpiexec -n 2 dlhack train --communicator chainermn:naive
    dlhack train --corpus ../shared/data/small_parallel_enja --units 256 --layers 3
    dlhack train --gpu                                # GPU intra_rank % the GPUs it sees
    metrics = train(TrainConfig(units=64, epochs=2))  # from Python: the same settings

The data-parallel part is a handful of lines, marked ``# MN:`` (lesson 3 shows them as a diff):
create a communicator, pick the GPU from ``intra_rank`` (``parallel.devices``), wrap the optimizer, scatter the
dataset, make evaluation multi-node, and keep reporting on rank 0. ``--batchsize`` is per rank,
so the effective batch is batchsize x ranks. One process is simply a job of one rank: the same
lines run, with a communicator of size one, so there is no separate single-process path.
Every setting is a field of ``TrainConfig``, written once: its flag, default and help come from it.

Cost per step: one allreduce of every gradient (as many bytes as the model); per evaluation, a
few small reductions; once, rank 0 reads the corpus and sends each rank its shard.
"""
import argparse
import dataclasses
import time

import chainer
import numpy as np
from chainer.training import extensions

from dlhack import report, step_profile
from dlhack.corpus.batching import BalancedIterator, BucketIterator
from dlhack.evaluation import BleuEvaluator, bleu_of, samples
from dlhack.model.formulations import IMPLS, formulation
from dlhack.model.heap import keep_freed_memory
from dlhack.model.seq2seq import convert
from dlhack.parallel import (
    create_communicator,
    create_multi_node_evaluator,
    create_multi_node_optimizer,
    scatter_dataset,
)
from dlhack.parallel.devices import select_gpu
from dlhack.parallel.schedules import LinearScalingWarmup, lr_scale
from dlhack.parallel.sharded import can_shard
from dlhack.parallel.speed_shares import SpeedShares
from dlhack.step_profile import ProfilingUpdater, TimedUpdater


def setting(default, help, short=None, **argparse_options):
    """A ``TrainConfig`` field: its default, and its flag's help (and short flag, choices)."""
    return dataclasses.field(default=default,
                             metadata={"help": help, "short": short, **argparse_options})


@dataclasses.dataclass
class TrainConfig:
    """Every setting of a training run. Flat on purpose: one flag each on the command line
    (``n_train`` is ``--n-train``; a switch that is on by default is turned off by ``--no-...``,
    and its help says what that does)."""

    corpus: str = setting(None, "small_parallel_enja-style directory "
                          "(default: the embedded corpus)", "-c")
    n_train: int = setting(20000, "embedded corpus: training pairs")
    vocab_size: int = setting(None, "cap on each vocabulary (default: every training word)")
    units: int = setting(128, "LSTM units (128 learns the embedded grammar in minutes on a CPU)",
                         "-u")
    layers: int = setting(2, "LSTM layers of the encoder and of the decoder", "-l")
    dropout: float = setting(0.1, "dropout ratio")
    attention: bool = setting(True, "a decoder without attention")
    impl: str = setting("fast", "LSTM formulation (nstep: Chainer's NStepLSTM reference; "
                        "fused: FusedSeq2seq with PackedAdam)", choices=IMPLS)
    balance: bool = setting(False, "every rank holds all the data and takes its share, by "
                            "tokens, of each step's global batch (BalancedIterator)")
    balance_speed: bool = setting(False, "with --balance: shares in proportion to each rank's "
                                  "measured speed, not equal (parallel/speed_shares.py)")
    batchsize: int = setting(64, "per rank", "-b")
    epochs: float = setting(8, "epochs to train", "-e")
    iterations: int = setting(None, "stop after N iterations instead", "-i")
    lr: float = setting(2e-3, "Adam's alpha (for the batch of one rank, with --scale-lr)")
    scale_lr: str = setting("none", "multiply lr by the ranks (linear: Goyal et al.'s rule) "
                            "or their square root (sqrt)", choices=("none", "linear", "sqrt"))
    warmup: float = setting(0, "epochs over which the rate climbs from lr to the scaled lr")
    seed: int = setting(0, "seed of the corpus, the weights and the shuffling", "-s")
    out: str = setting("result/train", "folder for the log, plots, model and metrics", "-o")
    gpu: bool = setting(False, "each rank takes GPU intra_rank %% the GPUs it sees, one GPU per "
                        "rank checked (dlhack.parallel.devices)", "-g")
    share_gpu: bool = setting(False, "let ranks of a node share a GPU (trying 2 ranks on 1 GPU)")
    communicator: str = setting("auto", "auto (shm over mpiexec's ranks) | none (this process "
                                "alone) | naive | ring | mpi | shm | chainermn:naive "
                                "| chainermn:flat | chainermn:pure_nccl")
    eval_every: float = setting(1, "epochs between dev evaluations (0: none)")
    n_eval: int = setting(500, "dev/test sentences to score")
    snapshot_every: int = setting(0, "iterations between snapshots, and one at the end (0: none)")
    resume: str = setting(None, "snapshot to resume from ('auto': the newest in OUT)")
    max_length: int = setting(60, "longest translation, in tokens")
    progress: bool = setting(True, "no progress line")
    json: str = setting(None, "metrics file (default OUT/metrics.json)")
    profile: bool = setting(False, "per-rank time breakdown (dlhack.step_profile)")
    overlap: bool = setting(False, "allreduce the gradients in buckets while backward runs")
    shard_update: bool = setting(True, "every rank takes the whole optimizer step (by default "
                                 "--impl fused divides it among a node's ranks under shm)")
    # Python's own collector pauses one rank at a time, and the others wait for it.
    gc_every: int = setting(50, "collect garbage every N steps, on every rank at once "
                            "(0: Python decides)")
    # The gradients the mean replaces are freed mid-step; glibc hands them back to the OS.
    keep_memory: bool = setting(True, "leave glibc to give freed memory back to the OS: each "
                                "step faults it in again (model/heap.py; --impl fused keeps it)")


def make_communicator(name):
    """The communicator for ``--communicator``: ``"auto"`` is ``"shm"`` over every rank
    mpiexec started (size one without mpiexec; the ring where ranks span nodes); ``"none"`` is
    this process alone, a communicator of size one even under mpiexec."""
    if name in ("none", None):
        from mpi4py import MPI

        return create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    return create_communicator("shm" if name == "auto" else name)


def load_data(config, comm):
    """Rank 0 reads the corpus; vocabularies go to every rank, sentences are scattered.

    Returns:
        ``((src_vocab, tgt_vocab), train, dev, test)``: this rank's shard of each split, dev and
        test as ``((src_ids, tgt_ids), reference tokens)`` examples for BLEU.
    """
    from dlhack.corpus import default_corpus, load_corpus

    root = comm.rank == 0
    corpus = None
    if root:
        corpus = (load_corpus(config.corpus, vocab_size=config.vocab_size) if config.corpus
                  else default_corpus(seed=config.seed, n_train=config.n_train))

    def held_out(split):  # ((src_ids, tgt_ids), reference tokens) for BLEU
        return list(zip(corpus.splits[split], (t for _, t in corpus.raw[split])))[:config.n_eval]

    train, dev, test = (corpus.train, held_out("dev"), held_out("test")) if root else [None] * 3
    vocabs, n_held_out = comm.bcast_obj(
        ((corpus.src_vocab, corpus.tgt_vocab), min(len(dev), len(test))) if root else None)
    if n_held_out < comm.size:  # every rank raises together: none is left waiting in a collective
        raise ValueError(f"{n_held_out} dev/test sentences for {comm.size} ranks: every rank "
                         f"needs at least one to evaluate; raise --n-eval to {comm.size} or more")
    if config.balance:  # every rank plans the same global batches (make_iterator)
        train = comm.bcast_obj(train)
    else:  # equal lengths keep every rank's iteration count in step
        train = scatter_dataset(train, comm, shuffle=True, seed=config.seed,  # MN: shards
                                equal_length=True)
    dev = scatter_dataset(dev, comm)    # exact partitions: each sentence scored once
    test = scatter_dataset(test, comm)
    return vocabs, list(train), list(dev), list(test)


def train(config, comm=None, load=load_data, stop=None, share=None):
    """Train a translator; returns the metrics dict (the same on every rank).

    Args:
        config: a ``TrainConfig``.
        comm: a communicator (``dlhack.parallel`` or ChainerMN); by default made from
            ``config.communicator``.
        load: ``load(config, comm)`` returns what ``load_data`` returns; a benchmark passes
            its own (``dlhack.bench.training``: one rank's shard, trained alone).
        stop: the trainer's stop trigger; by default ``config``'s epochs or iterations
            (``stop_trigger``); ``dlhack.bench.training`` adds a time limit.
        share: with ``config.balance``, ``(rank, size)``: whose share of each global batch
            this process trains on (default: ``comm``'s; a benchmark trains one share alone).
    """
    comm = comm or make_communicator(config.communicator)  # MN: every rank; alone: size 1
    device = chainer.get_device(-1)
    if config.gpu:  # MN: one GPU per rank on a node; set it before any array is created
        gpu = select_gpu(comm, share=config.share_gpu)  # intra_rank % the GPUs it sees, checked
        device = chainer.get_device(f"@cupy:{gpu}")
    device.use()
    np.random.seed(config.seed)
    (src_vocab, tgt_vocab), train_data, dev, test = load(config, comm)

    model, optimizer = formulation(config.impl, len(src_vocab), len(tgt_vocab), lr=config.lr,
                                   n_units=config.units, n_layers=config.layers,
                                   dropout=config.dropout, attention=config.attention)
    model.to_device(device)
    shard = (config.shard_update and not (config.overlap or config.gpu)  # dlhack.parallel.sharded
             and can_shard(optimizer, comm) is None)  # each rank updates its chunk of the weights
    optimizer = create_multi_node_optimizer(optimizer, comm,  # MN: average gradients first
                                            overlap=config.overlap, shard=shard)
    optimizer.setup(model)

    it = make_iterator(config, train_data, *(share or (comm.rank, comm.size)))
    updater = make_updater(config, it, optimizer, comm, device)
    trainer = chainer.training.Trainer(updater, stop or stop_trigger(config), out=config.out)
    snapshots = extend(trainer, config, comm, model, dev, tgt_vocab, device)

    start = time.perf_counter()
    trainer.run()
    seconds = time.perf_counter() - start
    if snapshots and config.snapshot_every:  # the end, too: resume it to train longer
        snapshots.finish(trainer)
    metrics = {"bleu": bleu_of(model, test, tgt_vocab, comm, max_length=config.max_length),
               **report.run_summary(config, comm, updater, len(train_data) * comm.size
                             // (it.size if config.balance else 1), seconds)}
    if config.profile:
        metrics.update(profile_of(updater, config, comm))
    if comm.rank == 0:
        metrics["samples"] = samples(model, test[:5], src_vocab, tgt_vocab)
        report.finish(trainer, model, config, metrics, src_vocab, tgt_vocab)
    return metrics


def extend(trainer, config, comm, model, dev, tgt_vocab, device):
    """The trainer's extensions: dev evaluation, the rate's schedule, snapshots (returned, or
    None), and rank 0's reports."""
    if config.eval_every and dev:  # the dev loss and BLEU, over every rank's shard
        dev_iter = BucketIterator([pair for pair, _ in dev], 256, shuffle=False, repeat=False)
        loss_eval = extensions.Evaluator(dev_iter, model, converter=convert, device=device)
        loss_eval = create_multi_node_evaluator(loss_eval, comm)  # MN: mean over all shards
        trainer.extend(loss_eval, trigger=(config.eval_every, "epoch"), name="validation")
        bleu_eval = BleuEvaluator(model, dev, tgt_vocab, comm, max_length=config.max_length)
        trainer.extend(bleu_eval, trigger=(config.eval_every, "epoch"))
    if config.scale_lr != "none" or config.warmup:  # lesson 5: the rate follows the batch
        trainer.extend(LinearScalingWarmup(config.lr, lr_scale(config.scale_lr, comm.size),
                                           config.warmup, attr="alpha"))
    if config.balance_speed:  # a slower core takes a smaller share of each global batch
        updater = trainer.updater
        trainer.extend(SpeedShares(updater.get_iterator("main"), updater.get_optimizer("main"), comm))
    snapshots = None
    if config.snapshot_every or config.resume:
        from dlhack.snapshot import attach_snapshots

        snapshots = attach_snapshots(trainer, comm, config.snapshot_every, resume=config.resume)
    if comm.rank == 0:  # MN: reporting, plots and files on rank 0 only
        report.attach(trainer, config, progress=config.progress)
    return snapshots


def make_iterator(config, train_data, rank, size):
    """This rank's batches: its shard, bucketed; or its share, by tokens, of every global batch."""
    if config.balance:
        return BalancedIterator(train_data, config.batchsize, size, rank, seed=config.seed)
    return BucketIterator(train_data, config.batchsize, seed=config.seed)


def make_updater(config, iterator, optimizer, comm, device):
    """The training step, timed for the throughput; with ``config.profile``, timed phase by
    phase as well (``dlhack.step_profile``). Either way it is the same step."""
    if config.profile:
        updater = ProfilingUpdater(iterator, optimizer, comm, converter=convert, device=device)
    else:
        updater = TimedUpdater(iterator, optimizer, converter=convert, device=device)
    updater.collect_every(config.gc_every)
    if config.keep_memory:  # no page faults for what each step frees and takes again
        keep_freed_memory()
    return updater


def stop_trigger(config):
    """When training stops: after ``config.iterations`` if set, else ``config.epochs``."""
    return (config.iterations, "iteration") if config.iterations else (config.epochs, "epoch")


def profile_of(updater, config, comm):
    """Every rank's step breakdown, gathered, and its verdict; rank 0 prints both."""
    summary = updater.summary()
    verdict = step_profile.verdict(summary, batchsize=config.batchsize)
    if comm.rank == 0:
        print(step_profile.format_breakdown(summary))
        print(verdict)
    return {"profile": summary, "verdict": verdict}


def add_flag(parser, field):
    """``field``'s flag: ``n_train`` is ``--n-train`` (and its short flag); a bool is a switch,
    ``--name`` when it is off by default and ``--no-name`` when it is on."""
    options = dict(field.metadata)
    short = options.pop("short")
    name = field.name.replace("_", "-")
    if field.type is bool:
        name = f"no-{name}" if field.default else name
        options["action"] = "store_false" if field.default else "store_true"
    else:
        options["type"] = field.type
    flags = [short, f"--{name}"] if short else [f"--{name}"]
    parser.add_argument(*flags, dest=field.name, default=field.default, **options)


def build_parser():
    """``dlhack train``'s command line: one flag per ``TrainConfig`` field, nothing else."""
    parser = argparse.ArgumentParser(prog="dlhack train", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    for field in dataclasses.fields(TrainConfig):
        add_flag(parser, field)
    return parser


def main(argv=None):
    args = build_parser().parse_args(argv)
    config = TrainConfig(**vars(args))
    train(config)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
