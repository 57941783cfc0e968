# MUTANT: divides the global sum by the rank count, not the value count
# EXPECT: expected
def global_mean(comm, values):
    """The mean of every rank's ``values`` together (some ranks may have none).

    Args:
        comm: an mpi4py communicator.
        values: this rank's numbers, a list (possibly empty).

    Returns:
        A float, the same on every rank.
    """
    ### BEGIN SOLUTION
    total = comm.allreduce(float(sum(values)))
    count = comm.allreduce(len(values))
    return total / comm.size
    ### END SOLUTION
