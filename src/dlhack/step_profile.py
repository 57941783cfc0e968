"""Where each rank's training step goes: data, forward, backward, wait, allreduce, optimizer.

    mpiexec -n 2 dlhack train --profile --iterations 50     # prints the breakdown on rank 0
    updater = ProfilingUpdater(iterator, optimizer, comm, converter=convert)   # in a script

``ProfilingUpdater`` runs the ordinary ``StandardUpdater`` step through the multi-node
optimizer, unchanged, and times it from the outside: for the length of a step it wraps the
loss function (forward), the communicator's ``multi_node_mean_grad`` (allreduce) and the wrapped
optimizer's ``update`` (optimizer), and puts an MPI barrier just before the allreduce, so that
the time spent waiting for the slowest rank ("wait") is measured apart from the allreduce
itself. ``verdict`` turns a breakdown into the usual diagnosis when a parallel run is slower
than it should be (lesson 6).

Cost: one barrier per step (a profiled run keeps its ranks in step), and on a GPU one device
synchronisation per phase; ``summary`` gathers one small dict per rank, once at the end.
"""
import os
import statistics
import time
from contextlib import contextmanager, nullcontext

import chainer

from dlhack.model.heap import kernel_usage
from dlhack.parallel.gcstep import StepCollector

PHASES = ("data", "forward", "backward", "wait", "allreduce", "optimizer")


class TimedUpdater(chainer.training.StandardUpdater):
    """A StandardUpdater that adds up the seconds spent in training steps (not evaluation).

    The first ``skip`` steps are left out: they allocate memory and broadcast the root's
    weights, which would make a short throughput probe look slower than training is.
    """

    elapsed = 0.0
    timed_steps = 0
    skip = 2
    collector = StepCollector(every=0)  # garbage collection in step (``gc_every``); off here

    def collect_every(self, every):
        """Collect garbage every ``every`` steps, on every rank at once (parallel/gcstep.py)."""
        self.collector = StepCollector(every)

    def update(self):
        self.collector.start()
        start = time.perf_counter()
        timed = self.iteration >= self.skip
        super().update()
        self.collector.step(self.iteration)  # inside the timing: the throughput pays for it
        if timed:
            self.elapsed += time.perf_counter() - start
            self.timed_steps += 1

    def finalize(self):
        self.collector.stop()
        super().finalize()

    def throughput(self, sentences):
        """Sentences per second, given the sentences of every step (the same share is timed)."""
        if not self.timed_steps:
            return float("nan")
        return sentences * self.timed_steps / self.iteration / self.elapsed


@contextmanager
def replaced(obj, name, value):
    """Set ``obj.name = value`` (an instance attribute) for the duration of a ``with`` block."""
    had, old = name in vars(obj), vars(obj).get(name)
    setattr(obj, name, value)
    try:
        yield
    finally:
        if had:
            setattr(obj, name, old)
        else:
            delattr(obj, name)  # the class's method shows through again


class ProfilingUpdater(TimedUpdater):
    """A TimedUpdater whose steps are also timed phase by phase (seconds in ``self.seconds``).

    A step is a timeline cut at the calls it wraps: "data" runs from the start of the step to
    the call of the loss function (next batch, converter), "forward" is that call, "backward"
    runs from its return to the allreduce (``cleargrads``, ``loss.backward``), "wait" is the
    barrier, "allreduce" the communicator's call, and "optimizer" the wrapped optimizer's
    ``update`` (its hooks included); a sharded optimizer's ``reduce_scatter`` and
    ``update_chunk`` (``dlhack.parallel.sharded``) stand in for those two. The phases add up to the step, bar the updater's own
    bookkeeping. Steps that do not reach the allreduce (ChainerMN's optimizer spends its first
    update on the broadcast alone) are among the ``skip`` warm-up steps left out.

    Args:
        iterator, optimizer: as for ``StandardUpdater``; ``optimizer`` must be a multi-node
            optimizer (``dlhack.parallel``'s or ChainerMN's), whose ``actual_optimizer`` it times.
        comm: the communicator that optimizer averages with (``dlhack.parallel`` or ChainerMN).
        skip: first steps left out of the figures (warm-up).
    """

    def __init__(self, iterator, optimizer, comm, skip=2, **kwargs):
        super().__init__(iterator, optimizer, **kwargs)
        if not hasattr(optimizer, "actual_optimizer"):
            raise TypeError("ProfilingUpdater times the steps of a multi-node optimizer: pass "
                            "create_multi_node_optimizer(optimizer, comm)")
        self.comm, self.skip = comm, skip  # the same warm-up steps as TimedUpdater leaves out
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.waits = []  # each timed step's wait, in seconds: a few long ones, or every step?
        self.kernel = [0.0, 0, 0.0]  # the timed steps' kernel seconds, page faults, CPU seconds
        # ChainerMN before v7 called the communicator's ``allreduce_grad``.
        self.mean_grad = ("multi_node_mean_grad" if hasattr(comm, "multi_node_mean_grad")
                          else "allreduce_grad")
        self._last = None

    def _lap(self, phase):
        """Charge the time since the last lap to ``phase`` (after the device has finished)."""
        xp = self.get_optimizer("main").target.xp
        if xp is not chainer.backend.numpy:  # GPU work is asynchronous: wait for it
            xp.cuda.Device().synchronize()
        now = time.perf_counter()
        if self.iteration >= self.skip:
            self.seconds[phase] += now - self._last
        self._last = now

    def _between(self, call, before, after):
        """``call``, with the time up to it charged to ``before`` and its own to ``after``."""
        def timed(*args, **kwargs):
            self._lap(before)
            result = call(*args, **kwargs)
            self._lap(after)
            return result
        return timed

    def update_core(self):
        optimizer = self.get_optimizer("main")
        actual = optimizer.actual_optimizer
        forward = self.loss_func or optimizer.target
        # dlhack.parallel.sharded: its reduce-scatter is the "allreduce", its chunk the update
        sharded = getattr(optimizer, "reduce_scatter", None) is not None
        averages = (optimizer, "reduce_scatter") if sharded else (self.comm, self.mean_grad)
        updates = (optimizer, "update_chunk") if sharded else (actual, "update")
        barrier = self._between(self.comm.mpi_comm.Barrier, "backward", "wait")
        allreduce = self._between(getattr(*averages), "wait", "allreduce")

        def wait_then_allreduce(*args, **kwargs):
            barrier()  # blocks until the slowest rank gets here
            return allreduce(*args, **kwargs)

        timed_forward = self._between(forward, "data", "forward")
        timed_update = self._between(getattr(*updates), "allreduce", "optimizer")
        # overlap=True: the buckets travel during backward, so "backward" includes the
        # communication it hides and "allreduce" is only the wait left after backward.
        hook = getattr(optimizer, "overlap", None)
        exposed = (replaced(hook, "finish", self._between(hook.finish, "backward", "allreduce"))
                   if hook is not None else nullcontext())
        with (replaced(self, "loss_func", timed_forward),
              replaced(*averages, wait_then_allreduce),
              replaced(*updates, timed_update), exposed):
            self._last = time.perf_counter()
            waited, before = self.seconds["wait"], kernel_usage()
            super().update_core()  # the ordinary step, through the multi-node optimizer
            if self.iteration >= self.skip:
                self.waits.append(self.seconds["wait"] - waited)
                self.kernel = [k + now - then for k, now, then
                               in zip(self.kernel, kernel_usage(), before)]

    def breakdown(self):
        """This rank's mean milliseconds per step for each phase."""
        n = max(self.timed_steps, 1)
        return {p: 1000 * self.seconds[p] / n for p in PHASES}

    def summary(self):
        """Every rank's breakdown, gathered (the same dict on every rank), with the wait of
        its median step: the mean wait of ``breakdown`` may come from a few long steps."""
        median = 1000 * statistics.median(self.waits) if self.waits else 0.0
        n = max(self.timed_steps, 1)
        mine = {"rank": self.comm.rank, "ms": self.breakdown(), "threads": blas_threads(),
                "wait_median_ms": median, "kernel_ms": 1000 * self.kernel[0] / n,
                "faults": self.kernel[1] / n, "cpu_ms": 1000 * self.kernel[2] / n}
        gathered = self.comm.gather_obj(mine)  # None but on rank 0 (ChainerMN insists on it)
        return self.comm.bcast_obj({"ranks": gathered} if self.comm.rank == 0 else None)


def waiting(summary, mean_wait, total):
    """The wait's sentence: its share of the ``total`` step (a cause of its own over a tenth;
    under it, said where it grew most), then its kind: at every step, or in a few long steps."""
    share = f"{mean_wait / total:.0%} of a step"
    lead = (f"Ranks wait for each other: {share} is spent at the barrier before the allreduce. "
            if mean_wait > 0.10 * total else f"The ranks wait {share} on average. ")
    medians = [r["wait_median_ms"] for r in summary["ranks"] if "wait_median_ms" in r]
    typical = sum(medians) / len(medians) if medians else None
    if typical is not None and typical < 0.5 * mean_wait:
        return lead + (f"Yet the median step waits only {typical:.1f} ms: the wait comes in a "
                       "few long steps, so the work is balanced. A rank slowed down for a spell "
                       "(a busy or shared machine), or one rank does work every few steps (a "
                       "log, a snapshot, an evaluation); balancing the batches will not remove "
                       "it.")
    every = f" (the median step waits {typical:.1f} ms)" if typical is not None else ""
    return lead + (f"It is there at every step{every}: some rank has more work per step. "
                   "Unbalanced batches (sort or bucket by length, shuffle), a straggler (a slower "
                   "core: dlhack train --balance --balance-speed gives it less), or work such as "
                   "evaluation or logging done on one rank inside the step.")


def blas_threads():
    """Threads the BLAS library will use in this process."""
    from threadpoolctl import threadpool_info

    return max([i.get("num_threads", 1) for i in threadpool_info()
                if i.get("user_api") == "blas"] or [1])


def format_breakdown(summary):
    """A table: one row per rank, one column per phase (ms per step); then, where measured,
    each rank's time in the kernel and page faults per step (part of the phases' time)."""
    lines = ["rank " + "".join(f"{p:>11}" for p in PHASES) + "      total"]
    for r in summary["ranks"]:
        ms = r["ms"]
        lines.append(f"{r['rank']:>4} " + "".join(f"{ms[p]:>9.1f}ms" for p in PHASES)
                     + f"{sum(ms.values()):>9.1f}ms")
    kernel = [r for r in summary["ranks"] if "kernel_ms" in r]
    if kernel:
        lines.append("in the kernel, per step: " + ", ".join(
            f"rank {r['rank']} {r['kernel_ms']:.1f} ms ({r['faults']:.0f} page faults)"
            for r in kernel))
    return "\n".join(lines)


def format_waits(summary):
    """One line: each rank's wait at its median step beside its mean wait per step."""
    ranks = [r for r in summary["ranks"] if "wait_median_ms" in r]
    return "wait per step, median step and mean: " + ", ".join(
        f"rank {r['rank']} {r['wait_median_ms']:.2f} and {r['ms']['wait']:.2f} ms"
        for r in ranks) + f", of a {sum(mean_breakdown(summary).values()):.1f} ms step"


def mean_breakdown(summary):
    """Phase times averaged over ranks."""
    ranks = summary["ranks"]
    return {p: sum(r["ms"][p] for r in ranks) / len(ranks) for p in PHASES}


def verdict(summary, baseline=None, batchsize=None, ranks_per_node=None, cores=None):
    """One paragraph on what limits a data-parallel run, naming the usual causes.

    Args:
        summary: ``ProfilingUpdater.summary()`` of the parallel run.
        baseline: the same for a one-process run with the same per-rank batch, if measured.
        batchsize: the per-rank batch.
        ranks_per_node, cores: to judge thread oversubscription (default: all ranks on this
            node, ``os.cpu_count()``).
    """
    ms = mean_breakdown(summary)
    total = sum(ms.values()) or 1e-9
    n_ranks = len(summary["ranks"])
    ranks_per_node = ranks_per_node or n_ranks
    cores = cores or os.cpu_count()
    threads = max(r["threads"] for r in summary["ranks"])
    causes, grew_most = [], None
    if baseline is not None:
        base = mean_breakdown(baseline)
        grew = {p: ms[p] - base[p] for p in PHASES}
        grew_most = max(grew, key=grew.get)
        slower = total / (sum(base.values()) or 1e-9)
        causes.append(f"A step takes {slower:.2f}x as long as on one process; "
                      f"'{grew_most}' grew most (+{grew[grew_most]:.1f} ms).")
    if threads * ranks_per_node > cores:
        causes.append(f"Threads are oversubscribed: {ranks_per_node} ranks x {threads} BLAS "
                      f"threads on {cores} cores, so ranks fight over cores and forward/"
                      "backward slow down. Set OMP_NUM_THREADS=1 (and OPENBLAS_NUM_THREADS=1) "
                      "for each rank.")
    fixed = ms["allreduce"] + ms["optimizer"]  # per step, whatever the batch size
    if fixed > 0.25 * total or (batchsize is not None and batchsize < 8):
        small = f" with a per-rank batch of {batchsize}" if batchsize else ""
        causes.append(f"Per-step costs dominate{small}: the allreduce and the optimizer update "
                      f"take {fixed / total:.0%} of a step. They cost the same whatever the "
                      "batch (the gradient is as large as the model), so a tiny per-rank batch "
                      "leaves too little computation to pay for them: raise the per-rank batch "
                      "(and scale the learning rate), or use a faster communicator.")
    if ms["wait"] > 0.10 * total or (grew_most == "wait" and ms["wait"] > 0.01 * total):
        causes.append(waiting(summary, ms["wait"], total))
    # Of a rank's CPU time, not of the wall clock: a rank that shares its core with other
    # processes waits longer, which says nothing of what its faults cost.
    def share(rank):
        return rank["kernel_ms"] / (rank.get("cpu_ms") or total)

    worst = max((r for r in summary["ranks"] if "kernel_ms" in r), key=share, default=None)
    if worst and share(worst) > 0.05 and worst["faults"] >= 100:  # not a driver's calls
        causes.append(f"The kernel takes {share(worst):.0%} of rank {worst['rank']}'s CPU time in a "
                      f"step ({worst['faults']:.0f} page faults per step): memory freed in a step "
                      "goes back to the operating system, and the next step faults it in "
                      "again. Keep it in the process (dlhack.model.heap.keep_freed_memory; "
                      "dlhack train does unless --no-keep-memory).")
    if ms["data"] > 0.15 * total:
        causes.append(f"Loading data is {ms['data'] / total:.0%} of a step: check that each "
                      "rank reads only its shard and that batches are not built from disk.")
    if len(causes) == (1 if baseline is not None else 0):
        causes.append("No usual cause stands out: computation dominates and ranks are in step.")
    return " ".join(causes)
