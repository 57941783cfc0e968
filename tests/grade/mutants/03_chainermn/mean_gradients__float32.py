# MUTANT: replaces each gradient with a float32 copy: forgets the dtype
# EXPECT: Dtype of data and grad
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
        param.grad = (param.grad / comm.size).astype('float32')
    ### END SOLUTION
