# MUTANT: averages the ranks' means: weighs a small shard's values more
# EXPECT: mean of the ranks' means
# FAST
def global_mean(comm, values):
    """The mean of every rank's ``values`` together (some ranks may have none).

    Args:
        comm: an mpi4py communicator.
        values: this rank's numbers, a list (possibly empty).

    Returns:
        A float, the same on every rank.
    """
    ### BEGIN SOLUTION
    means = comm.allgather(sum(values) / len(values) if values else None)
    means = [m for m in means if m is not None]
    return sum(means) / len(means)
    ### END SOLUTION
