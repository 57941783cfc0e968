# MUTANT: reduces to rank 0 and returns None elsewhere
# EXPECT: returned None
def global_mean(comm, values):
    """The mean of every rank's ``values`` together (some ranks may have none).

    Args:
        comm: an mpi4py communicator.
        values: this rank's numbers, a list (possibly empty).

    Returns:
        A float, the same on every rank.
    """
    ### BEGIN SOLUTION
    total = comm.reduce(float(sum(values)), root=0)
    count = comm.reduce(len(values), root=0)
    return total / count if comm.rank == 0 else None
    ### END SOLUTION
