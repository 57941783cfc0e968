"""A parameter server over MPI messages: synchronous, asynchronous, and allreduce beside them.

    mpiexec -n 3 python -m dlhack.parallel.paramserver --modes sync async allreduce --json ps.json
    mpiexec -n 3 python -m dlhack.parallel.paramserver --straggler 1 --delay 0.02 --seconds 2 --steps 10000
    mpiexec -n 5 python -m dlhack.parallel.paramserver --kind least_squares --lr 1 --modes sync async

Parameter server (パラメータサーバ): rank 0 holds the parameters, a flat float32 vector; ranks
1..size-1 are workers. A worker computes a gradient on a minibatch of its shard, pushes it to the
server (``Send``, tag ``GRAD``) and pulls the parameters back (``Recv``, tag ``PARAMS``); after its
last step it sends ``DONE``. The server stops when every worker has said done, so nothing hangs.

Modes (lesson 4 explains them): synchronous (同期更新, one mean of every worker's gradient per
round), asynchronous (非同期更新, each gradient applied on arrival, ``Probe`` with ``ANY_SOURCE``;
its staleness, 古さ, is counted by the server) and allreduce (peer to peer, no server; the same
result as synchronous PS from the same workers, data and seed).

Cost, for ``n`` float32 parameters (``4 n`` bytes) and ``p`` ranks, so ``p - 1`` workers:

- a worker, per step: 2 messages of ``n`` elements, its gradient up and the parameters down
  (``8 n`` bytes through its link), then one empty ``DONE`` message at the end;
- the server, per round (sync) or per ``p - 1`` gradients (async): ``2 (p - 1)`` messages,
  ``8 (p - 1) n`` bytes through its one link, the bottleneck that grows with ``p``;
- allreduce, per step: one ``Allreduce`` of ``n`` elements on every rank, about
  ``2 (p - 1) / p * 4 n`` bytes sent per rank, no rank busier than another.

The problems and the one-process references are ``paramserver_problem``'s (re-exported here).
"""
import argparse
import json
import time

import numpy as np
from mpi4py import MPI

from dlhack.parallel.paramserver_problem import (
    KINDS,
    Problem,
    gradient,
    loss,
    make_grad_fn,
    make_problem,
    serial_reference,
    stale_reference,
)

GRAD, PARAMS, DONE = 1, 2, 3  # message tags
SERVER = 0

__all__ = ["DONE", "GRAD", "KINDS", "PARAMS", "SERVER", "Problem", "allreduce_train",  # and the
           "async_server", "compare", "gradient", "loss", "main", "make_grad_fn",  # problem's
           "make_problem", "serial_reference", "stale_reference", "sync_server", "train",
           "worker_loop"]


def worker_loop(comm, params, grad_fn, n_steps, delay=0.0, deadline=None, server=SERVER):
    """A worker: ``n_steps`` times push a gradient and pull parameters, then say done.

    Args:
        comm: the communicator the server is on.
        params: the parameters to start from; overwritten by each pull.
        grad_fn: ``grad_fn(params, step) -> float32 gradient`` like ``params``.
        n_steps: gradients to push.
        delay: seconds to sleep per step, to make this worker a straggler (遅いワーカー).
        deadline: a ``time.perf_counter()`` time after which to stop early (None: never).
        server: the server's rank.

    Returns:
        The number of gradients pushed.
    """
    step = 0
    while step < n_steps and (deadline is None or time.perf_counter() < deadline):
        if delay:
            time.sleep(delay)
        comm.Send(grad_fn(params, step), dest=server, tag=GRAD)
        comm.Recv(params, source=server, tag=PARAMS)
        step += 1
    comm.Send(np.empty(0, np.float32), dest=server, tag=DONE)
    return step


def sync_server(comm, params, n_workers, lr, on_update=None):
    """Synchronous server: each round, one gradient from every active worker; apply the mean.

    Workers are ranks 1..n_workers. Gradients are added in rank order, so the result is the
    same bits whatever order they arrived in.

    Returns:
        ``(staleness, sources)``: per applied gradient, its staleness (always 0 here) and sender.
    """
    status, done = MPI.Status(), np.empty(0, np.float32)
    active = list(range(1, n_workers + 1))
    staleness, sources = [], []
    while active:
        total, pushed = np.zeros_like(params), []
        for src in list(active):
            comm.Probe(source=src, tag=MPI.ANY_TAG, status=status)
            if status.Get_tag() == DONE:
                comm.Recv(done, source=src, tag=DONE)
                active.remove(src)
                continue
            grad = np.empty_like(params)
            comm.Recv(grad, source=src, tag=GRAD)
            total += grad
            pushed.append(src)
        if not pushed:
            break
        params -= lr * (total / len(pushed))
        staleness += [0] * len(pushed)  # every gradient was computed on the current version
        sources += pushed
        if on_update:
            on_update(params)
        for dst in pushed:
            comm.Send(params, dest=dst, tag=PARAMS)
    return staleness, sources


def async_server(comm, params, n_workers, lr, on_update=None):
    """Asynchronous server: apply each gradient as it arrives, reply with the current parameters.

    Workers are ranks 1..n_workers and start from version 0 of ``params`` (updated in place).

    Returns:
        ``(staleness, sources)``: per applied gradient, in the order applied, the number of
        updates since its worker pulled the parameters it used, and the worker's rank.
    """
    status, done = MPI.Status(), np.empty(0, np.float32)
    version, sent = 0, {w: 0 for w in range(1, n_workers + 1)}  # the version each worker has
    n_done, staleness, sources = 0, [], []
    grad = np.empty_like(params)
    while n_done < n_workers:
        comm.Probe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        src, tag = status.Get_source(), status.Get_tag()
        if tag == DONE:
            comm.Recv(done, source=src, tag=DONE)
            n_done += 1
            continue
        comm.Recv(grad, source=src, tag=GRAD)
        params -= lr * grad
        staleness.append(version - sent[src])
        sources.append(src)
        version += 1
        if on_update:
            on_update(params)
        comm.Send(params, dest=src, tag=PARAMS)
        sent[src] = version
    return staleness, sources


def allreduce_train(comm, params, grad_fn, n_steps, lr, on_update=None, deadline=None):
    """Peer to peer: every rank is a worker; average gradients with Allreduce, update locally.

    Returns:
        The number of steps made (fewer than ``n_steps`` when rank 0 passed ``deadline``).
    """
    for step in range(n_steps):
        # With a deadline, all ranks must stop at the same step: rank 0's clock decides.
        if deadline is not None and comm.bcast(time.perf_counter() >= deadline, root=0):
            return step
        grad = grad_fn(params, step)
        comm.Allreduce(MPI.IN_PLACE, grad, op=MPI.SUM)
        params -= lr * (grad / comm.size)
        if on_update:
            on_update(params)
    return n_steps


def train(comm, mode="sync", n_steps=100, batchsize=32, lr=0.1, seed=0, straggler=None,
          delay=0.0, seconds=None, n_samples=2048, n_features=16, kind="logistic"):
    """Train ``make_problem(seed, n_samples, n_features, kind)`` on ``comm``, in ``mode``:
    "sync", "async" or "allreduce".

    Args:
        comm: every rank of it takes part; in PS modes rank 0 serves and the others work.
        n_steps: gradients each worker computes.
        batchsize: examples per gradient (the global batch of a sync round is n_workers x this).
        straggler: the rank made slow on purpose (None: nobody), sleeping ``delay`` s per step.
        seconds: a time budget: each worker stops after it, even before ``n_steps``.

    Returns:
        On rank 0 a dict: ``updates`` (server updates), ``applied``/``pushed`` (gradient
        counts), ``curve`` (``update``, ``time``, ``loss`` after each update), ``staleness`` and
        ``sources`` per applied gradient, ``staleness_hist``, ``worker_seconds``, ``params``.
        On other ranks ``{"steps": gradients this rank computed}``.
    """
    rank, size = comm.rank, comm.size
    ps = mode in ("sync", "async")
    if ps and size < 2:
        raise ValueError(f"mode {mode!r} needs a server and at least one worker: run >= 2 ranks")
    n_workers = size - 1 if ps else size
    problem = make_problem(seed, n_samples, n_features, kind)
    params = np.zeros(problem.n_params, np.float32)
    curve = {"update": [], "time": [], "loss": []}
    comm.Barrier()
    start = time.perf_counter()
    deadline = None if seconds is None else start + seconds

    def record(p):  # called on rank 0 after each update
        curve["update"].append(len(curve["update"]) + 1)
        curve["time"].append(time.perf_counter() - start)
        curve["loss"].append(loss(p, problem.X, problem.y, kind))

    staleness, sources, steps = [], [], 0
    if ps and rank == SERVER:
        serve = sync_server if mode == "sync" else async_server
        with np.errstate(over="ignore", invalid="ignore"):  # a diverging run overflows: let it
            staleness, sources = serve(comm, params, n_workers, lr, on_update=record)
    else:
        worker = rank - 1 if ps else rank
        grad_fn = make_grad_fn(problem, worker, n_workers, batchsize, seed)
        wait = delay if rank == straggler else 0.0
        if ps:
            steps = worker_loop(comm, params, grad_fn, n_steps, delay=wait, deadline=deadline)
        else:
            slow = (lambda p, s: time.sleep(wait) or grad_fn(p, s)) if wait else grad_fn
            steps = allreduce_train(comm, params, slow, n_steps, lr, deadline=deadline,
                                    on_update=record if rank == 0 else None)
    seconds = time.perf_counter() - start
    counts = comm.gather((steps, seconds), root=0)
    if rank != 0:
        return {"steps": steps}
    settings = {"mode": mode, "n_workers": n_workers, "n_steps": n_steps, "batchsize": batchsize,
                "lr": lr, "straggler": straggler, "delay": delay}
    return {**settings, **_outcome(curve, staleness, sources, counts, params, seconds,
                                   applied=len(staleness) if ps else steps * size)}


def _outcome(curve, staleness, sources, counts, params, seconds, applied):
    """What rank 0 reports of a run, besides its settings (see ``train``'s Returns)."""
    return {
        "updates": len(curve["update"]), "applied": applied,
        "pushed": sum(s for s, _ in counts), "curve": curve, "staleness": staleness,
        "sources": sources, "staleness_hist": np.bincount(staleness).tolist() if staleness else [],
        "worker_seconds": {r: t for r, (s, t) in enumerate(counts) if s},
        "seconds": seconds, "final_loss": curve["loss"][-1] if curve["loss"] else None,
        "params": params.tolist()}


def compare(comm, modes=("sync", "async", "allreduce"), **kwargs):
    """Run each mode in turn; allreduce on ranks 0..size-2, so every mode has size-1 workers.

    Returns:
        On rank 0, ``{mode: result of train}``; on other ranks ``{}``.
    """
    results = {}
    for mode in modes:
        if mode == "allreduce" and comm.size > 1:
            sub = comm.Split(0 if comm.rank < comm.size - 1 else MPI.UNDEFINED, comm.rank)
            # rank r + 1 of a PS is worker r, which is rank r here: slow down the same worker.
            straggler = kwargs.get("straggler")
            args = dict(kwargs, straggler=None if straggler is None else straggler - 1)
            result = train(sub, mode, **args) if sub != MPI.COMM_NULL else {}
            if sub != MPI.COMM_NULL:
                sub.Free()
        else:
            result = train(comm, mode, **kwargs)
        if comm.rank == 0:
            results[mode] = result
        comm.Barrier()
    return results


def main(argv=None):
    """``python -m dlhack.parallel.paramserver`` under mpiexec; rank 0 prints and writes the JSON."""
    p = argparse.ArgumentParser(prog="python -m dlhack.parallel.paramserver", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-m", "--modes", nargs="+", default=["sync", "async", "allreduce"],
                   choices=["sync", "async", "allreduce"], help="modes to run, in turn")
    p.add_argument("-n", "--steps", type=int, default=200, help="gradients per worker")
    p.add_argument("-b", "--batchsize", type=int, default=32, help="examples per gradient")
    p.add_argument("--lr", type=float, default=0.1, help="learning rate (plain SGD)")
    p.add_argument("-s", "--seed", type=int, default=0)
    p.add_argument("-k", "--kind", choices=KINDS, default="logistic", help="the problem trained")
    p.add_argument("--straggler", type=int, default=None, help="rank to slow down on purpose")
    p.add_argument("--delay", type=float, default=0.02, help="the straggler's sleep per step (s)")
    p.add_argument("-t", "--seconds", type=float, default=None,
                   help="time budget per mode: workers stop after it (then --steps is a maximum)")
    p.add_argument("-j", "--json", help="write every mode's result here (rank 0)")
    args = p.parse_args(argv)
    comm = MPI.COMM_WORLD
    results = compare(comm, args.modes, n_steps=args.steps, batchsize=args.batchsize,
                      lr=args.lr, seed=args.seed, straggler=args.straggler, delay=args.delay,
                      seconds=args.seconds, kind=args.kind)
    if comm.rank == 0:  # only rank 0 prints and writes
        for mode, r in results.items():
            hist = " ".join(f"{s}:{c}" for s, c in enumerate(r["staleness_hist"]) if c)
            print(f"{mode:>9}: {r['n_workers']} workers, {r['updates']} updates, "
                  f"{r['applied']} gradients applied of {r['pushed']} pushed, "
                  f"{r['seconds']:.2f} s, final loss {r['final_loss']:.4g}"
                  + (f", staleness {hist}" if hist else ""))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(results, f)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
