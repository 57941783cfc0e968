# MUTANT: wraps comm.mpi_comm in the course's Communicator and calls its multi_node_mean_grad
# EXPECT: course library's version
from mpi4py import MPI


def mean_gradients(comm, model):
    """Replace every gradient of ``model`` with its mean over the ranks, in place.

    Args:
        comm: has ``rank``, ``size`` and ``mpi_comm`` (an mpi4py communicator).
        model: a ``chainer.Link`` whose parameters all have a gradient (after ``backward``),
            the same parameters on every rank.
    """
    ### BEGIN SOLUTION
    from dlhack.parallel import Communicator

    Communicator(comm.mpi_comm).multi_node_mean_grad(model)
    ### END SOLUTION
