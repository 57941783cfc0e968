# MUTANT: allreduces the batch and divides by the rank count: the mean batch
# EXPECT: mean batch over the ranks
def linear_scaling_lr(base_lr, base_batchsize, batchsize, comm):
    """The learning rate for the effective batch: every rank's ``batchsize`` together.

    Args:
        base_lr: a learning rate that worked with batches of ``base_batchsize`` examples.
        base_batchsize: the batch ``base_lr`` was tuned for.
        batchsize: this rank's batch (the ranks' batches may differ).
        comm: has ``rank``, ``size`` and ``mpi_comm`` (an mpi4py communicator).

    Returns:
        ``base_lr`` scaled by effective batch / ``base_batchsize``, a float, the same on every
        rank.
    """
    ### BEGIN SOLUTION
    return base_lr * comm.mpi_comm.allreduce(batchsize) / comm.size / base_batchsize
    ### END SOLUTION
