# MUTANT: lets the error out on the failing rank only; the others go on
# EXPECT: every rank must raise RuntimeError
# FAST
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
    return step()
    ### END SOLUTION
