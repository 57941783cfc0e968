"""Exercise 2 of lab 06: ``all_or_nothing(comm, step)``: an error on one rank reaches them all.

After the call every rank reports what it saw with one allgather, so an answer that lets a
failing rank leave while the others wait in a collective hangs here, and the grader says so.
Which ranks fail, and with which kind of error, is drawn as well as fixed.
"""
import numpy as np
import pytest
from labtools import draw_seed, drawn


class BadShard(Exception):
    """What the failing ranks raise."""


def outcome(submission, comm, step):
    try:
        return ("returned", submission.all_or_nothing(comm, step))
    except NotImplementedError:
        raise  # a stub: the grader says "not yet done"
    except RuntimeError as err:
        return ("RuntimeError", str(err))
    except Exception as err:  # noqa: BLE001 - the answer let another error through
        return (type(err).__name__, str(err))


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


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2, 3, 4], timeout=15)
def test_an_error_on_one_rank_reaches_every_rank(submission, comm):
    """``step`` raises on rank 1 only: every rank raises RuntimeError naming ranks [1] and its
    error; then drawn ranks fail with a drawn kind of error."""
    report = comm.Dup()  # the test's own messages never meet the answer's collectives
    seen = report.allgather(outcome(submission, comm, failing_on({1}, comm.rank)))
    problem = problem_with(seen, [1], BadShard)
    assert problem is None, problem
    seed = draw_seed(comm)
    rng = np.random.RandomState(seed)
    for _ in range(2):
        failed = sorted(int(r) for r in rng.choice(comm.size, rng.randint(1, comm.size + 1),
                                                   replace=False))
        error = [BadShard, ValueError, ZeroDivisionError, OSError][rng.randint(4)]
        seen = report.allgather(outcome(submission, comm,
                                        failing_on(set(failed), comm.rank, error)))
        problem = problem_with(seen, failed, error)
        assert problem is None, (f"step failing on ranks {failed} with {error.__name__}: "
                                 f"{problem}" + drawn(seed))


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1, 3], timeout=15)
def test_success_and_failure_everywhere(submission, comm):
    """Nothing fails: each rank gets its own result, from one call of step. Everything fails:
    all ranks are named."""
    calls = []
    mine = outcome(submission, comm, failing_on(set(), comm.rank, calls=calls))
    assert mine == ("returned", comm.rank * 10), (
        f"step returned {comm.rank * 10} on rank {comm.rank}; all_or_nothing gave {mine}")
    assert len(calls) == 1, (
        f"all_or_nothing called step() {len(calls)} times on rank {comm.rank}; call it once and "
        f"keep what it returned (a step trains or loads: it must not run twice)")
    everyone = list(range(comm.size))
    kind, text = outcome(submission, comm, failing_on(set(everyone), comm.rank))
    assert kind == "RuntimeError" and f"ranks {everyone}" in text, (
        f"step failed on every rank; expected RuntimeError naming ranks {everyone}, got "
        f"{kind}: {text!r}")
