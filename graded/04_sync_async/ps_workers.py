"""The worker side of lab 04's graded tests: ranks 1..size-1 push gradients to the learner's
``async_server`` on rank 0 and check what comes back.

The gradients are chosen so that the parameters keep a ledger (with lr = 1):

- element 0 counts updates: every gradient has -1 there, so ``params[0]`` is the version;
- each gradient has +1 in a slot of its own, so a slot ends at -1 when its gradient was applied
  exactly once (0: never; -2: twice).

A worker reads the version of the parameters it computes on, and of those the server sends back
(the version just after its own update), so it knows what the staleness of each of its
gradients must be, and the update number it got.
"""
import importlib.util
import os
import time

import numpy as np
from labtools import block_imports

# The library's parameter server holds this lab's answer (the lab prints its module beside the
# exercise): it cannot be imported here. The tests read its problems and references from
# paramserver_problem, loaded by its path (numpy only: no Chainer in these ranks).
block_imports(("dlhack.parallel.paramserver",),
              "{name}, the course library's parameter server, holds the server this lab asks you "
              "to write yourself: it cannot be imported here")


def paramserver_problem():
    """dlhack.parallel.paramserver_problem, loaded by its path without importing the package."""
    home = importlib.util.find_spec("dlhack").submodule_search_locations[0]
    spec = importlib.util.spec_from_file_location(
        "_lab04_paramserver_problem", os.path.join(home, "parallel", "paramserver_problem.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module

GRAD, PARAMS, DONE = 1, 2, 3  # the tags of the lab (and of dlhack.parallel.paramserver)
REPLY_TIMEOUT_S = 8.0
RECORD_TIMEOUT_S = 3.0  # under the grader's 5 s grace after a rank passes


class NoReply(AssertionError):
    """A worker pushed a gradient and the server never sent parameters back."""


def ledger_size(steps):
    """Parameters for workers doing ``steps[w]`` steps: the counter, then one slot per gradient."""
    return 1 + sum(steps)


def slot(steps, worker, step):
    """Where gradient ``step`` of ``worker`` (0-based) writes its +1."""
    return 1 + sum(steps[:worker]) + step


def gradient(n_params, where):
    grad = np.zeros(n_params, np.float32)
    grad[0], grad[where] = -1.0, 1.0
    return grad


def wait_reply(comm, params, rank, step, timeout=REPLY_TIMEOUT_S):
    """Receive the server's reply into ``params``, or fail with a message after ``timeout`` s."""
    request = comm.Irecv(params, source=0, tag=PARAMS)
    deadline = time.monotonic() + timeout
    while not request.Test():
        if time.monotonic() > deadline:
            request.Cancel()
            raise NoReply(
                f"worker rank {rank} pushed gradient {step + 1} and got no parameters back within "
                f"{timeout:g} s. The server must answer every gradient with "
                f"comm.Send(params, dest=source, tag=PARAMS), and keep serving until all "
                f"n_workers workers have sent DONE (not stop at the first DONE)")
        time.sleep(0.0005)


def run_worker(comm, steps, delay=0.0, before_first=None, reply_timeout=REPLY_TIMEOUT_S):
    """Push ``steps[rank - 1]`` ledger gradients, then DONE; returns what this worker saw.

    Args:
        comm: the test's communicator; rank 0 runs the learner's server.
        steps: gradients per worker (index: rank - 1).
        delay: seconds to sleep before each push.
        before_first: called before the first push (to order the workers).
        reply_timeout: seconds to wait for each answer before failing.

    Returns:
        ``[(version computed on, version after this update), ...]``, one per gradient.
    """
    rank, worker = comm.rank, comm.rank - 1
    n_params = ledger_size(steps)
    params = np.zeros(n_params, np.float32)  # version 0, what the server starts from
    seen = []
    for step in range(steps[worker]):
        if step == 0 and before_first:
            before_first()
        if delay:
            time.sleep(delay)
        version = int(params[0])
        comm.Send(gradient(n_params, slot(steps, worker, step)), dest=0, tag=GRAD)
        wait_reply(comm, params, rank, step, reply_timeout)
        seen.append((version, int(params[0])))
    comm.Send(np.empty(0, np.float32), dest=0, tag=DONE)
    return seen


def collect_records(side, size, tag):
    """On rank 0, after the server returned: each worker's record, sent once it said DONE.

    A worker that has not sent its record within a few seconds is still waiting for an answer:
    the server returned too early, and this says so (instead of the job hanging).
    """
    requests = {r: side.irecv(source=r, tag=tag) for r in range(1, size)}
    records, deadline = {}, time.monotonic() + RECORD_TIMEOUT_S
    while requests and time.monotonic() < deadline:
        for r, request in list(requests.items()):
            done, record = request.test()
            if done:
                records[r] = record
                del requests[r]
        time.sleep(0.001)
    if requests:
        late = ", ".join(str(r) for r in requests)
        raise AssertionError(
            f"async_server returned, but worker rank{'s' if len(requests) > 1 else ''} {late} had "
            f"not finished: still waiting for an answer to a gradient. Return only when all "
            f"n_workers workers have sent DONE (count the DONE messages)")
    return records


def ledger_problem(params, steps):
    """None when every gradient was applied exactly once; else a sentence on what went wrong."""
    if not isinstance(params, np.ndarray) or params.shape != (ledger_size(steps),):
        return f"params changed type or shape: got {type(params).__name__} {getattr(params, 'shape', '')}"
    if np.all(params == 0):
        return ("params is unchanged on the server: update it in place (params -= lr * grad), "
                "since the caller keeps the same array")
    wrong = []
    for worker, n in enumerate(steps):
        for step in range(n):
            times = -params[slot(steps, worker, step)]
            if times != 1:
                wrong.append(f"gradient {step + 1} of worker rank {worker + 1} was applied "
                             f"{times:g} times")
    if wrong:
        more = f" (and {len(wrong) - 3} more)" if len(wrong) > 3 else ""
        return "; ".join(wrong[:3]) + more + ": apply each received gradient exactly once"
    return None


def expected_staleness(seen_by_rank):
    """The staleness list the server should return, from what every worker saw, by update."""
    total = sum(len(seen) for seen in seen_by_rank.values())
    expected = [None] * total
    for rank, seen in seen_by_rank.items():
        for version, after in seen:
            if not 1 <= after <= total or expected[after - 1] is not None:
                return None  # replies out of order: the ledger says so already
            expected[after - 1] = (after - 1 - version, rank)
    return expected


def staleness_problem(got, expected):
    """None when the returned staleness list is right; else a sentence saying where it is not."""
    if got is None:
        return "async_server returned None: return the list of staleness values"
    try:
        got = [int(s) for s in got]
    except (TypeError, ValueError):
        return f"async_server should return a list of ints; got {type(got).__name__}"
    want = [s for s, _ in expected]
    if len(got) != len(want):
        return (f"the staleness list has {len(got)} entries, but {len(want)} gradients were "
                f"applied: append one value per applied gradient (none for DONE messages)")
    if got == want:
        return None
    if all(g == w + 1 for g, w in zip(got, want)):
        return ("every staleness is 1 too large: compute it before counting the update "
                "(version - version_sent[source], then version += 1)")
    k = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
    hint = ""
    if not any(got) and any(want):
        hint = (": every value is 0, but some gradients were computed on parameters that other "
                "workers' updates had since changed")
    return (f"update {k + 1} (a gradient from worker rank {expected[k][1]}) has staleness "
            f"{got[k]}, expected {want[k]}: the number of updates the server made since it sent "
            f"that worker the parameters it used{hint}")


def turn_worker(comm, side, grad_fn, n_params, n_steps, token_tag):
    """A worker of ``harm``: push, get the answer, then hand the turn to the next worker.

    Worker ranks 1..size-1 form a ring on ``side``: rank 1 starts, and each waits for the
    previous one's turn to end (its answer received) before pushing. So the server applies the
    gradients in the order worker 1, 2, ..., size-1, 1, ..., whatever its own order of serving:
    what ``stale_reference`` computes in one process. Returns the number of gradients pushed.
    """
    rank, workers = comm.rank, comm.size - 1
    params = np.zeros(n_params, np.float32)  # version 0, what the server starts from
    before, after = (rank - 2) % workers + 1, rank % workers + 1  # the ring's neighbours
    for step in range(n_steps):
        if step > 0 or rank > 1:
            side.recv(source=before, tag=token_tag)
        comm.Send(grad_fn(params, step), dest=0, tag=GRAD)
        wait_reply(comm, params, rank, step)
        if not (step == n_steps - 1 and rank == workers):
            side.send(None, dest=after, tag=token_tag)
    comm.Send(np.empty(0, np.float32), dest=0, tag=DONE)
    return n_steps
