"""Where each rank's training step goes: data, forward, backward, wait, allreduce, optimizer.

    mpiexec -n 2 dlhack train --profile --iterations 50     # prints the breakdown on rank 0

``ProfilingUpdater`` runs the same step as the multi-node optimizer, but in timed phases, and
puts an MPI barrier before the allreduce so that the time spent waiting for the slowest rank
("wait") is measured apart from the allreduce itself. ``verdict`` turns a breakdown into the
usual diagnosis when a parallel run is slower than it should be (lesson 6).
"""
import os
import time
from collections import defaultdict
from contextlib import contextmanager

import chainer

from dlhack.train import TimedUpdater

PHASES = ("data", "forward", "backward", "wait", "allreduce", "optimizer")


class ProfilingUpdater(TimedUpdater):
    """A StandardUpdater whose step is timed phase by phase (seconds in ``self.seconds``).

    Args:
        comm: the communicator (None for one process); the optimizer may be wrapped by a
            multi-node optimizer, whose wrapped optimizer is used here directly.
        skip: first steps left out of the figures (warm-up).
    """

    def __init__(self, iterator, optimizer, comm=None, skip=2, **kwargs):
        super().__init__(iterator, optimizer, **kwargs)
        self.comm, self.skip = comm, skip  # the same warm-up steps as TimedUpdater leaves out
        self.seconds = defaultdict(float)
        self.steps = 0

    @contextmanager
    def _phase(self, name, xp):
        start = time.perf_counter()
        yield
        if xp is not chainer.backend.numpy:  # GPU work is asynchronous: wait for it
            xp.cuda.Device().synchronize()
        if self.iteration >= self.skip:
            self.seconds[name] += time.perf_counter() - start

    def update_core(self):
        optimizer = self.get_optimizer("main")
        actual = getattr(optimizer, "actual_optimizer", optimizer)
        model = actual.target
        xp = model.xp
        with self._phase("data", xp):
            batch = self.converter(self.get_iterator("main").next(), self.input_device)
        if self.iteration == 0 and self.comm is not None:
            self.comm.bcast_data(model)  # every rank starts from the root's weights
        with self._phase("forward", xp):
            loss = model(**batch)
        with self._phase("backward", xp):
            model.cleargrads()
            loss.backward()
        if self.comm is not None:
            with self._phase("wait", xp):
                self.comm.mpi_comm.Barrier()  # blocks until the slowest rank gets here
            with self._phase("allreduce", xp):
                self.comm.multi_node_mean_grad(model, True)
        with self._phase("optimizer", xp):
            actual.update()
        if self.iteration >= self.skip:
            self.steps += 1

    def breakdown(self):
        """This rank's mean milliseconds per step for each phase."""
        n = max(self.steps, 1)
        return {p: 1000 * self.seconds[p] / n for p in PHASES}

    def summary(self):
        """Every rank's breakdown, gathered (the same dict on every rank)."""
        mine = {"rank": 0, "ms": self.breakdown(), "threads": blas_threads()}
        if self.comm is None:
            return {"ranks": [mine]}
        mine["rank"] = self.comm.rank
        gathered = self.comm.gather_obj(mine)
        return self.comm.bcast_obj({"ranks": gathered})


def blas_threads():
    """Threads the BLAS library will use in this process."""
    from threadpoolctl import threadpool_info

    return max([i.get("num_threads", 1) for i in threadpool_info()
                if i.get("user_api") == "blas"] or [1])


def format_breakdown(summary):
    """A table: one row per rank, one column per phase (ms per step)."""
    lines = ["rank " + "".join(f"{p:>11}" for p in PHASES) + "      total"]
    for r in summary["ranks"]:
        ms = r["ms"]
        lines.append(f"{r['rank']:>4} " + "".join(f"{ms[p]:>9.1f}ms" for p in PHASES)
                     + f"{sum(ms.values()):>9.1f}ms")
    return "\n".join(lines)


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
    causes = []
    if baseline is not None:
        base = mean_breakdown(baseline)
        grew = {p: ms[p] - base[p] for p in PHASES}
        worst = max(grew, key=grew.get)
        slower = total / (sum(base.values()) or 1e-9)
        causes.append(f"A step takes {slower:.2f}x as long as on one process; "
                      f"'{worst}' grew most (+{grew[worst]:.1f} ms).")
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
    if ms["wait"] > 0.10 * total:
        causes.append(f"Ranks wait for each other: {ms['wait'] / total:.0%} of a step is spent "
                      "at the barrier before the allreduce. Some rank has more work per step: "
                      "unbalanced batches (sort or bucket by length, shuffle), a straggler, or "
                      "work such as evaluation or logging done on one rank inside the step.")
    if ms["data"] > 0.15 * total:
        causes.append(f"Loading data is {ms['data'] / total:.0%} of a step: check that each "
                      "rank reads only its shard and that batches are not built from disk.")
    if len(causes) == (1 if baseline is not None else 0):
        causes.append("No usual cause stands out: computation dominates and ranks are in step.")
    return " ".join(causes)
