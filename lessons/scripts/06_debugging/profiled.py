"""Time training steps, and set one process beside N ranks in one job; used by 06_* to 09_*.

    summary, sentences, seconds = train_steps(comm, batchsize=32)   # the step, in phases
    compare(comm, {"broken": work})                                 # rank 0 prints a table
    compare(comm, {"broken": broken.work, "fixed": fixed.work})     # compare.py does this

The steps are those of ``dlhack train --profile``: the multi-node optimizer's ordinary steps,
timed from the outside by ``dlhack.step_profile.ProfilingUpdater`` in phases (data, forward,
backward, wait, allreduce, optimizer), in milliseconds per step, for every rank.

``compare`` runs every variant in turn inside this one job, ``REPEATS`` times, the order
turned round every repeat. "One process" is rank 0 working alone (a communicator over
``MPI.COMM_SELF``, as ``dlhack run --single`` would run it) while the other ranks sleep;
"N ranks" is every rank. A busy spell of the machine thus hits every variant alike, and each
ratio is taken between runs of the same repeat: the table gives its median and its range.
A ``work(c, **options)`` function does the job on communicator ``c`` and returns
``(units, seconds, note)``: how much it did, in how long, and a few words on how.
"""
import os
import statistics
import tempfile
import time

import chainer
import numpy as np
from mpi4py import MPI

from dlhack import step_profile
from dlhack.corpus import default_corpus
from dlhack.corpus.batching import BucketIterator
from dlhack.model.heap import keep_freed_memory
from dlhack.model.seq2seq import Seq2seq, convert
from dlhack.parallel import create_communicator, create_multi_node_optimizer, scatter_dataset

SMALL = os.environ.get("DLHACK_SMALL") == "1"  # a quick look (and CI): one repeat
REPEATS = 1 if SMALL else 3
_corpora = {}  # n_train -> the corpus, made once per process (only rank 0 ever needs it)
PROFILES = []  # (summary, batchsize) of each train_steps call, for compare to show
keep_freed_memory()  # as dlhack train does: each step reuses the memory the last one freed (f5)


def corpus_of(n_train):
    if n_train not in _corpora:
        _corpora[n_train] = default_corpus(seed=0, n_train=n_train, n_dev=1, n_test=1)
    return _corpora[n_train]


def train_steps(comm, batchsize, iterations=12, link=None, units=128, layers=2, n_train=1000):
    """``iterations`` profiled steps on the embedded corpus, every rank on its shard.

    Args:
        link: wraps the communicator the optimizer averages with (``SlowLink``), or None.

    Returns:
        ``(summary, sentences, seconds)``: every rank's breakdown, the sentences all ranks
        trained on in the timed steps (the first ``skip`` are warm-up), and their seconds.
    """
    corpus = corpus_of(n_train) if comm.rank == 0 else None
    sizes = comm.bcast_obj((len(corpus.src_vocab), len(corpus.tgt_vocab)) if corpus else None)
    train = scatter_dataset(corpus.train if corpus else None, comm, shuffle=True, seed=0,
                            equal_length=True)
    np.random.seed(0)
    model = Seq2seq(*sizes, n_units=units, n_layers=layers)
    averaging = link(comm) if link else comm
    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(alpha=2e-3), averaging)
    optimizer.setup(model)
    batches = []  # each step's batch size: the same on every rank (equal shards, one plan)

    def counted(batch, device=None):
        batches.append(len(batch))
        return convert(batch, device)

    updater = step_profile.ProfilingUpdater(BucketIterator(train, batchsize), optimizer,
                                            averaging, converter=counted)
    trainer = chainer.training.Trainer(updater, (iterations, "iteration"),
                                       out=tempfile.gettempdir())
    trainer.run()
    summary = updater.summary()
    if link:  # how long the simulated wire takes each allreduce (the same for every step)
        summary["link_ms"] = 1000 * averaging.cost(averaging.bytes / averaging.messages)
    PROFILES.append((summary, batchsize))
    return summary, sum(batches[updater.skip:]) * comm.size, updater.elapsed


def step_note(summary, batchsize):
    """"batch 2 a rank: 16.5 ms a step, 8.2 ms a sentence, 6.3 ms allreduce + optimizer"."""
    ms = step_profile.mean_breakdown(summary)
    total = sum(ms.values())
    wire = f" ({summary['link_ms']:.1f} ms on the wire)" if "link_ms" in summary else ""
    return (f"batch {batchsize} a rank: {total:.1f} ms a step, {total / batchsize:.1f} ms a "
            f"sentence, {ms['allreduce'] + ms['optimizer']:.1f} ms of it allreduce{wire} + "
            "optimizer")


# One process beside N ranks, in one job ---------------------------------------------------

def _sleep_until_every_rank_is_here(comm):
    """A barrier that sleeps instead of spinning: a waiting rank leaves the cores alone."""
    request = comm.mpi_comm.Ibarrier()
    while not request.Test():
        time.sleep(0.005)


def run_variant(comm, alone, ranks, work, options):
    """``work`` on every rank of ``comm``, or on rank 0 alone (``ranks == 1``) while the
    others sleep; rank 0 gets the result."""
    result = None
    if ranks == comm.size:
        result = work(comm, **options)
    elif comm.rank == 0:
        result = work(alone, **options)
    _sleep_until_every_rank_is_here(comm)
    return result


def speedup_verdict(ratio, ranks, fixed):
    """A measured ratio to one process, in words: slower, no faster, or faster and how well."""
    said = f"{ratio:.2f}x of one process, efficiency {ratio / ranks:.2f}"
    if ratio < 0.95:
        return f"{said}: slower than one process"
    if ratio <= 1.05:
        return f"{said}: no faster than one process"
    if fixed:
        return f"{said}: faster than one process"
    return f"{said}: faster than one process, so here this cause costs efficiency only"


def compare(comm, columns, rows=None, unit="sentences/s", repeats=REPEATS, name="compare"):
    """One process, N ranks, and N ranks with each of ``rows``' options, for each column's
    code, side by side; rank 0 prints rates, ratios to one process, notes and verdicts.

    Args:
        columns: ``{"broken": work}``, ``{"broken": work, "fixed": work}``...
        rows: ``{label: options}``: more N-rank rows, ``work(c, **options)``.
        unit: what ``units / seconds`` measures.
        name: starts every verdict line (``verdict: NAME, ...``), so that a lesson's claims
            can tell one comparison's verdicts from another's.
    """
    table = [("one process", 1, {}), (f"{comm.size} ranks", comm.size, {})]
    table += [(f"{comm.size} ranks, {label}", comm.size, options)
              for label, options in (rows or {}).items()]
    cells = [(row, column) for row in table for column in columns.items()]
    alone = create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    rates, notes, profiles = {}, {}, {}
    load = os.getloadavg()[0]
    for repeat in range(repeats):
        for (label, ranks, options), (column, work) in cells[::1 - 2 * (repeat % 2)]:
            result = run_variant(comm, alone, ranks, work, options)
            if comm.rank == 0:
                units, seconds, notes[label, column] = result
                rates.setdefault((label, column), []).append(units / seconds)
                if PROFILES and ranks > 1 and column == "broken":
                    profiles[label] = PROFILES[-1]
    if comm.rank == 0:
        print_table(table, list(columns), rates, notes, unit, name)
        runs = (f"each figure the median of {repeats} rounds, each ratio the median of the "
                f"rounds' ratios" if repeats > 1 else "one round")
        print(f"({runs}, taken in turn; load average {load:.1f} before, "
              f"{os.getloadavg()[0]:.1f} after, on {os.cpu_count()} cores)")
        for label, (summary, batchsize) in profiles.items():
            print(f"\nbroken, {label}, as `dlhack train --profile` shows it (ms a step):")
            print(step_profile.format_breakdown(summary))
            print(f"verdict: {name}, broken, {label}: "
                  f"{step_profile.verdict(summary, batchsize=batchsize)}")


def ratio_text(ratios):
    """The median of per-repeat ratios, and their range when there are several."""
    spread = f" ({min(ratios):.2f}-{max(ratios):.2f})" if len(ratios) > 1 else ""
    return statistics.median(ratios), spread


def print_table(table, columns, rates, notes, unit, name):
    """Rates and their ratios to the one-process row of the same column; notes; verdicts."""
    width = max(len(label) for label, _, _ in table)
    print(f"{unit:{width}}" + "".join(f"  {column + ' code':^31}" for column in columns))
    verdicts, how = [], []
    for label, ranks, _ in table:
        line = f"{label:{width}}"
        for column in columns:
            ratio, spread = ratio_text([r / b for r, b in zip(rates[label, column],
                                                              rates[table[0][0], column])])
            line += f"  {statistics.median(rates[label, column]):>9.1f}  {ratio:5.2f}x{spread:14}"
            how.append(f"  {column}, {label}: {notes[label, column]}")
            if ranks > 1:
                verdicts.append(f"verdict: {name}, {column}, {label}: "
                                f"{speedup_verdict(ratio, ranks, fixed=column == 'fixed')}")
        print(line)
        if ranks > 1 and {"broken", "fixed"} <= set(columns):
            ratio, spread = ratio_text([b / f for b, f in zip(rates[label, "broken"],
                                                              rates[label, "fixed"])])
            verdicts.append(f"verdict: {name}, {label}: the broken code runs at "
                            f"{ratio:.2f}x{spread} the speed of the fixed code")
    print("\n".join(how + verdicts))
