# MUTANT: calls the course communicator's multi_node_mean_grad instead of writing it
# EXPECT: does not exist in this lab
# FAST
from mpi4py import MPI


def mean_gradients(comm, model):
    """Replace every gradient of ``model`` with its mean over the ranks, in place.

    Args:
        comm: has ``rank``, ``size`` and ``mpi_comm`` (an mpi4py communicator).
        model: a ``chainer.Link`` whose parameters all have a gradient (after ``backward``),
            the same parameters on every rank.
    """
    ### BEGIN SOLUTION
    comm.multi_node_mean_grad(model)
    ### END SOLUTION
