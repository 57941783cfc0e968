"""Exercise 2 of lab 06: ``all_or_nothing(comm, step)``: an error on one rank reaches them all.

After the call every rank reports what it saw with one allgather, so an answer that lets a
failing rank leave while the others wait in a collective hangs here, and the grader says so.
"""
import pytest


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


def failing_on(ranks, rank):
    def step():
        if rank in ranks:
            raise BadShard(f"rank {rank} has a bad shard")
        return rank * 10
    return step


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[2, 4], timeout=15)
def test_an_error_on_one_rank_reaches_every_rank(submission, comm):
    """``step`` raises on rank 1 only: every rank raises RuntimeError naming ranks [1]."""
    mine = outcome(submission, comm, failing_on({1}, comm.rank))
    seen = comm.allgather(mine)
    for rank, (kind, text) in enumerate(seen):
        assert kind == "RuntimeError", (
            f"rank {rank} {'returned ' + repr(text) if kind == 'returned' else 'raised ' + kind}"
            f"; when step fails on any rank, every rank must raise RuntimeError (agree on the "
            f"outcome with one collective, e.g. comm.allgather of each rank's error or None)")
        assert "ranks [1]" in text, (
            f"rank {rank}'s RuntimeError says {text!r}; it should name the failed ranks as a "
            f"list, e.g. 'step failed on ranks [1]: ...'")


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[1, 3], timeout=15)
def test_success_and_failure_everywhere(submission, comm):
    """Nothing fails: each rank gets its own result. Everything fails: all ranks are named."""
    mine = outcome(submission, comm, failing_on(set(), comm.rank))
    assert mine == ("returned", comm.rank * 10), (
        f"step returned {comm.rank * 10} on rank {comm.rank}; all_or_nothing gave {mine}")
    everyone = list(range(comm.size))
    kind, text = outcome(submission, comm, failing_on(set(everyone), comm.rank))
    assert kind == "RuntimeError" and f"ranks {everyone}" in text, (
        f"step failed on every rank; expected RuntimeError naming ranks {everyone}, got "
        f"{kind}: {text!r}")
