"""Lab 04: ``async_server(comm, params, n_workers, lr)``, the asynchronous parameter server.

Rank 0 runs the learner's server; the other ranks are workers written here (ps_workers.py) whose
gradients keep a ledger in the parameters: which gradient was applied how often, and what each
staleness must be. Records and turn-taking go over a duplicate communicator, so the server never
sees them. A straggler that holds back until the others are done shows a server that waits for
it; and the harm of staleness is graded on lesson 04's least squares at ``HARM_LR``, drawn from
the grader's seed for the launch (printed when the test fails).

Rank 0 observes what the server left (the parameters, its staleness list) and what each worker
saw; the grader decides. A worker that gets no answer fails in its own rank, saying so.
"""
import time

import numpy as np
import pytest
from ps_workers import (
    collect_records,
    expected_staleness,
    ledger_problem,
    ledger_size,
    paramserver_problem,
    run_worker,
    staleness_problem,
    turn_worker,
)

RECORDS = 7


def plain(staleness):
    """The server's staleness list with numpy ints as ints, for the grader (else as it is)."""
    if isinstance(staleness, (list, tuple)):
        return [int(s) if isinstance(s, np.integer) else s for s in staleness]
    return staleness


def serve_and_observe(submission, comm, observe, steps, delay_of=lambda rank: 0.0,
                      in_turns=False):
    """Run the learner's server on rank 0 and workers elsewhere; rank 0 observes everything."""
    side = comm.Dup()  # for records and turn-taking, out of the server's sight
    try:
        if comm.rank == 0:
            params = np.zeros(ledger_size(steps), np.float32)
            staleness = submission.async_server(comm, params, comm.size - 1, 1.0)
            seen = collect_records(side, comm.size, RECORDS)
            observe(params=params, staleness=plain(staleness),
                    seen={str(r): [list(pair) for pair in s] for r, s in seen.items()})
            return

        def wait_turn():  # worker r starts after worker r - 1 has finished
            if in_turns and comm.rank > 1:
                side.recv(source=comm.rank - 1, tag=RECORDS + 1)

        seen = run_worker(comm, steps, delay=delay_of(comm.rank), before_first=wait_turn)
        if in_turns and comm.rank < comm.size - 1:
            side.send(None, dest=comm.rank + 1, tag=RECORDS + 1)
        side.send(seen, dest=0, tag=RECORDS)
        observe()
    finally:
        side.Free()


def server_problem(obs, steps, staleness_too=True):
    """What is wrong with the server's run, from rank 0's observation (None: nothing)."""
    problem = ledger_problem(obs["params"], steps)
    if problem or not staleness_too:
        return problem
    expected = expected_staleness({int(r): [tuple(p) for p in s] for r, s in obs["seen"].items()})
    if expected is None:
        return "the replies came out of order: reply right after each update"
    return staleness_problem(obs["staleness"], expected)


STRAGGLER_WAIT_S = 8.0  # how long the straggler holds back for the others (a correct server: ms)
FINISHED = RECORDS + 2


def straggler_steps(size):
    return [2] + [3] * (size - 2)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=40)
def test_a_straggler_slows_only_itself(submission, comm, observe):
    """Worker rank 1 pushes nothing until the others have finished: they are served without it."""
    steps = straggler_steps(comm.size)
    side = comm.Dup()
    try:
        if comm.rank == 0:
            params = np.zeros(ledger_size(steps), np.float32)
            staleness = submission.async_server(comm, params, comm.size - 1, 1.0)
            records = collect_records(side, comm.size, RECORDS)
            observe(params=params, staleness=plain(staleness),
                    seen={str(r): [list(p) for p in rec["seen"]] for r, rec in records.items()},
                    unserved=records[1]["unserved"])
            return
        if comm.rank == 1:  # the straggler: waits for every other worker to finish first
            pending = {r: side.irecv(source=r, tag=FINISHED) for r in range(2, comm.size)}

            def hold_back():
                deadline = time.monotonic() + STRAGGLER_WAIT_S
                while time.monotonic() < deadline and not all(
                        pending[r].test()[0] for r in list(pending)):
                    time.sleep(0.002)
                hold_back.unserved = [r for r, request in pending.items() if not request.test()[0]]

            seen = run_worker(comm, steps, before_first=hold_back)
            for request in pending.values():  # the others finish in the end, whatever happened
                request.wait()
            side.send({"seen": seen, "unserved": hold_back.unserved}, dest=0, tag=RECORDS)
        else:
            seen = run_worker(comm, steps, reply_timeout=3 * STRAGGLER_WAIT_S)
            side.send(None, dest=1, tag=FINISHED)
            side.send({"seen": seen}, dest=0, tag=RECORDS)
        observe()
    finally:
        side.Free()


def check_a_straggler_slows_only_itself(obs, run):
    if run.rank != 0:
        return None
    steps = straggler_steps(run.size)
    problem = ledger_problem(obs["params"], steps)
    if problem:
        return problem
    unserved = obs["unserved"]
    if unserved:
        return (f"worker rank{'s' if len(unserved) > 1 else ''} {', '.join(map(str, unserved))} "
                f"pushed {steps[1]} gradients and got no answer within {STRAGGLER_WAIT_S:g} s "
                f"while worker rank 1, a straggler, had not pushed anything yet: the server "
                f"waited for the straggler (serving the workers in turn?). Probe with "
                f"source=MPI.ANY_SOURCE and serve whichever message is there, so that a "
                f"straggler slows only itself")
    return server_problem(obs, steps)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2, 4], timeout=40)
def test_every_gradient_applied_once(submission, comm, observe):
    """Each worker pushes 4 gradients: each is applied exactly once, and all workers finish."""
    serve_and_observe(submission, comm, observe, [4] * (comm.size - 1),
                      delay_of=lambda rank: 0.002 * (rank > 1))


def check_every_gradient_applied_once(obs, run):
    if run.rank != 0:
        return None
    steps = [4] * (run.size - 1)
    problem = server_problem(obs, steps, staleness_too=False)
    if problem:
        return problem
    staleness = obs["staleness"]
    if not isinstance(staleness, list) or len(staleness) != sum(steps):
        return (f"{sum(steps)} gradients were applied, but the staleness list has "
                f"{len(staleness) if isinstance(staleness, list) else 'no'} entries: append one "
                f"per gradient")
    return None


def done_steps(size):
    return [1, 6] if size == 3 else [0, 2, 6]


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=40)
def test_serves_until_every_worker_is_done(submission, comm, observe):
    """Workers stop at different times (one pushes nothing at 4 ranks): serve until all say done."""
    serve_and_observe(submission, comm, observe, done_steps(comm.size),
                      delay_of=lambda rank: 0.002 * (rank > 1))


def check_serves_until_every_worker_is_done(obs, run):
    return None if run.rank != 0 else server_problem(obs, done_steps(run.size), False)


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[3, 4], timeout=40)
def test_staleness_when_workers_take_turns(submission, comm, observe):
    """Worker 2 starts after worker 1's 3 updates, from version 0: its first staleness is 3."""
    serve_and_observe(submission, comm, observe, [3] * (comm.size - 1), in_turns=True)


def check_staleness_when_workers_take_turns(obs, run):
    return None if run.rank != 0 else server_problem(obs, [3] * (run.size - 1))


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[4], timeout=40)
def test_staleness_when_workers_race(submission, comm, observe):
    """Three workers at once, one slower: each staleness matches what the workers saw."""
    serve_and_observe(submission, comm, observe, [5, 5, 5],
                      delay_of=lambda rank: 0.003 * (rank == 1))


def check_staleness_when_workers_race(obs, run):
    return None if run.rank != 0 else server_problem(obs, [5, 5, 5])


HARM_WORKERS, HARM_STEPS, HARM_BATCH = 4, 8, 16
TOKEN = RECORDS + 3


def harm_problem(seed):
    ps = paramserver_problem()
    return ps, ps.make_problem(seed, n_samples=256, n_features=8, kind="least_squares")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[HARM_WORKERS + 1], timeout=60)
def test_stale_gradients_hurt(submission, comm, observe, seed):
    """Least squares at lr = HARM_LR, 4 workers taking turns: the server gives exactly what
    stale_reference computes, and loses more than 1000 x the loss of synchronous training."""
    ps, problem = harm_problem(seed)
    side = comm.Dup()
    try:
        if comm.rank == 0:
            params = np.zeros(problem.n_params, np.float32)
            with np.errstate(over="ignore", invalid="ignore"):
                submission.async_server(comm, params, HARM_WORKERS, ps.HARM_LR)
            observe(params=params)
            return
        grad_fn = ps.make_grad_fn(problem, comm.rank - 1, HARM_WORKERS, HARM_BATCH, seed)
        turn_worker(comm, side, grad_fn, problem.n_params, HARM_STEPS, TOKEN)
        observe()
    finally:
        side.Free()


def check_stale_gradients_hurt(obs, run):
    if run.rank != 0:
        return None
    ps, problem = harm_problem(run.seed)
    params = obs["params"]
    if not isinstance(params, np.ndarray) or params.shape != (problem.n_params,):
        return "params changed type or shape: update it in place (params -= lr * grad)"
    case = (f"least squares drawn with seed {run.seed}, {HARM_WORKERS} workers taking turns, "
            f"{HARM_STEPS} gradients each, lr {ps.HARM_LR:g}")

    def loss(p):
        return ps.loss(p, problem.X, problem.y, problem.kind)

    start = loss(np.zeros_like(params))
    sync = loss(ps.serial_reference(problem, HARM_WORKERS, HARM_STEPS, HARM_BATCH, ps.HARM_LR,
                                    run.seed))
    if not sync < start / 5:
        raise RuntimeError(f"the grader's own synchronous reference did not converge ({case})")
    want = ps.stale_reference(problem, HARM_WORKERS, HARM_STEPS, HARM_BATCH, ps.HARM_LR, run.seed)
    got = loss(params)
    ratio = got / sync if np.isfinite(got) else float("inf")
    if not ratio > 1e3:
        return (f"with {case}, the server's parameters end at loss {got:.4g}, {ratio:.3g} x the "
                f"loss of synchronous training ({sync:.4g}), where gradients 3 updates stale at "
                f"this learning rate make it diverge (stale_reference: loss {loss(want):.4g}): "
                f"apply each gradient whole, params -= lr * grad, as it arrives (no mean over "
                f"the workers, no waiting for a round)")
    scale = float(np.max(np.abs(want)))
    if not np.allclose(params, want, rtol=1e-5, atol=1e-6 * scale, equal_nan=True):
        return (f"with {case}, the server's parameters differ from stale_reference's by up to "
                f"{float(np.max(np.abs(params - want))):.3g} (of {scale:.3g}): apply each "
                f"gradient once, in the order the gradients arrive, and answer its worker with "
                f"the parameters just after")
    return None
