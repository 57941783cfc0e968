"""Exercise 2 of lab 06: ``all_or_nothing(comm, step)``: an error on one rank reaches them all.

After the call every rank reports what it saw with one allgather, so an answer that lets a
failing rank leave while the others wait in a collective hangs here, and the grader says so.
Which ranks fail, and with which kind of error, is drawn as well as fixed.
"""
import numpy as np
import pytest
from labtools import drawn


class BadShard(Exception):
    """What the failing ranks raise."""


def outcome(submission, comm, step):
    try:
        got = submission.all_or_nothing(comm, step)
    except NotImplementedError:
        raise  # a stub: the grader says "not yet done"
    except RuntimeError as err:
        return ("RuntimeError", str(err))
    except Exception as err:  # noqa: BLE001 - the answer let another error through
        return (type(err).__name__, str(err))
    return ("returned", got if isinstance(got, (int, float, str, type(None))) else repr(got))


def failing_on(ranks, rank, error=BadShard, calls=None):
    def step():
        if calls is not None:
            calls.append(rank)
        if rank in ranks:
            raise error(f"rank {rank} has a bad shard")
        return rank * 10
    return step


def problem_with(seen, failed, error):
    """None when every rank raised RuntimeError naming ``failed`` and the first failed rank's
    error; else a sentence about the first rank that did not."""
    first = f"{error.__name__}: rank {failed[0]} has a bad shard"
    for rank, (kind, text) in enumerate(seen):
        if kind == error.__name__ and any(k == "RuntimeError" for k, _ in seen):
            return (f"rank {rank} re-raised its own {kind}, while the others raised "
                    f"RuntimeError: every rank, the failed ones too, raises the same RuntimeError "
                    f"naming the failed ranks")
        if kind != "RuntimeError":
            return (f"rank {rank} {'returned ' + repr(text) if kind == 'returned' else 'raised ' + kind}"
                    f"; when step fails on any rank, every rank must raise RuntimeError (agree on "
                    f"the outcome with one collective, e.g. comm.allgather of each rank's error "
                    f"or None)" + (f"; a {error.__name__} must be caught as well as any other "
                                   f"error (except Exception)" if kind == error.__name__ else ""))
        if f"ranks {failed}" not in text:
            return (f"rank {rank}'s RuntimeError says {text!r}; it should name the failed ranks "
                    f"as a list, here 'step failed on ranks {failed}: ...'")
        if first not in text:
            return (f"rank {rank}'s RuntimeError says {text!r}; it should say what went wrong on "
                    f"the failed rank, {first!r}, on every rank (the ranks whose step worked "
                    f"learn it from the collective)")
    return None


def scenarios(seed, size):
    """Rank 1 failing with BadShard, then drawn ranks failing with a drawn kind of error."""
    rng = np.random.RandomState(seed)
    out = [([1], BadShard)]
    for _ in range(2):
        failed = sorted(int(r) for r in rng.choice(size, rng.randint(1, size + 1), replace=False))
        out.append((failed, [BadShard, ValueError, ZeroDivisionError, OSError][rng.randint(4)]))
    return out


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2, 3, 4], timeout=15)
def test_an_error_on_one_rank_reaches_every_rank(submission, comm, observe, seed):
    """``step`` raises on rank 1 only: every rank raises RuntimeError naming ranks [1] and its
    error; then drawn ranks fail with a drawn kind of error."""
    report = comm.Dup()  # the test's own messages never meet the answer's collectives
    seen = []
    for failed, error in scenarios(seed, comm.size):
        seen.append(list(outcome(submission, comm, failing_on(set(failed), comm.rank, error))))
        observe(seen=seen)
        report.barrier()  # a rank that left early waits here, not in the answer's collective
    report.Free()


def check_an_error_on_one_rank_reaches_every_rank(obs, run):
    everyone = [run.observed(r)["seen"] for r in range(run.size)]
    for i, (failed, error) in enumerate(scenarios(run.seed, run.size)):
        problem = problem_with([seen[i] for seen in everyone], failed, error)
        if problem and i:
            return (f"step failing on ranks {failed} with {error.__name__}: {problem}"
                    + drawn(run.seed))
        if problem:
            return problem
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1, 3], timeout=15)
def test_success_and_failure_everywhere(submission, comm, observe):
    """Nothing fails: each rank gets its own result, from one call of step. Everything fails:
    all ranks are named."""
    calls = []
    mine = outcome(submission, comm, failing_on(set(), comm.rank, calls=calls))
    everyone = list(range(comm.size))
    observe(mine=list(mine), calls=len(calls),
            failed=list(outcome(submission, comm, failing_on(set(everyone), comm.rank))))


def check_success_and_failure_everywhere(obs, run):
    if obs["mine"] != ["returned", run.rank * 10]:
        return (f"step returned {run.rank * 10} on rank {run.rank}; all_or_nothing gave "
                f"{tuple(obs['mine'])}")
    if obs["calls"] != 1:
        return (f"all_or_nothing called step() {obs['calls']} times on rank {run.rank}; call it "
                f"once and keep what it returned (a step trains or loads: it must not run twice)")
    everyone = list(range(run.size))
    kind, text = obs["failed"]
    if kind != "RuntimeError" or f"ranks {everyone}" not in text:
        return (f"step failed on every rank; expected RuntimeError naming ranks {everyone}, got "
                f"{kind}: {text!r}")
    return None
