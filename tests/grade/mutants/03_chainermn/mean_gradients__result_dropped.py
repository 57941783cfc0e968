# MUTANT: allreduces into a new array and never writes it back to param.grad
# EXPECT: still this rank's own gradient
from mpi4py import MPI


def mean_gradients(comm, model):
    """Replace every gradient of ``model`` with its mean over the ranks, in place.

    Args:
        comm: has ``rank``, ``size`` and ``mpi_comm`` (an mpi4py communicator).
        model: a ``chainer.Link`` whose parameters all have a gradient (after ``backward``),
            the same parameters on every rank.
    """
    ### BEGIN SOLUTION
    for _, param in sorted(model.namedparams()):
        total = comm.mpi_comm.allreduce(param.grad)
        total /= comm.size
    ### END SOLUTION
