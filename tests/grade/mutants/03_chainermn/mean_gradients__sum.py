# MUTANT: sums over the ranks but forgets to divide by the rank count
# EXPECT: sum over the ranks
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
        comm.mpi_comm.Allreduce(MPI.IN_PLACE, param.grad)  # the sum over ranks, in place
    ### END SOLUTION
