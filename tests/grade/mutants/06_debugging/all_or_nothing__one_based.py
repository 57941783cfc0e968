# MUTANT: numbers the failed ranks from 1
# EXPECT: name the failed ranks
def all_or_nothing(comm, step):
    """Run ``step()`` on every rank; if it raises on any rank, raise on every rank.

    Args:
        comm: an mpi4py communicator.
        step: a function without arguments, called once on every rank.

    Returns:
        What ``step()`` returned on this rank, when it raised on no rank.

    Raises:
        RuntimeError: on every rank when ``step`` raised on any, e.g.
            ``"step failed on ranks [1]: ValueError: rank 1 has a bad shard"``.
    """
    ### BEGIN SOLUTION
    try:
        result, error = step(), None
    except Exception as err:  # noqa: BLE001 - any error must reach the other ranks
        result, error = None, f"{type(err).__name__}: {err}"
    errors = comm.allgather(error)  # the one collective every rank reaches
    failed = [rank + 1 for rank, e in enumerate(errors) if e is not None]
    if failed:
        raise RuntimeError(f"step failed on ranks {failed}: {errors[failed[0]]}")
    return result
    ### END SOLUTION
