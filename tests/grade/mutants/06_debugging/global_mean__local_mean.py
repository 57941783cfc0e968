# MUTANT: returns this rank's own mean (nan on an empty shard)
# EXPECT: this rank's own mean
def global_mean(comm, values):
    """The mean of every rank's ``values`` together (some ranks may have none).

    Args:
        comm: an mpi4py communicator.
        values: this rank's numbers, a list (possibly empty).

    Returns:
        A float, the same on every rank.
    """
    ### BEGIN SOLUTION
    import numpy as np

    return float(np.mean(values)) if values else float("nan")
    ### END SOLUTION
