# MUTANT: rank 0 returns hy instead of send()'s delegate
# EXPECT: empty delegate
import numpy as np

from dlhack.parallel.model_parallel import recv, send
from dlhack.model.seq2seq import PAD, pad


def split_encode(model, comm, xs):
    """Rank 0: encode ``xs`` and send the results to rank 1. Rank 1: receive them.

    Args:
        model: this rank's half of the translator; on rank 0, ``model.encode(xs)`` encodes.
        comm: an mpi4py communicator with 2 ranks.
        xs: the batch's source id arrays (both ranks have them).

    Returns:
        On rank 0, the delegate variable that ``send`` returns. On rank 1,
        ``(hy, cy, enc, mask)`` as ``Seq2seq.encode`` returns them.
    """
    ### BEGIN SOLUTION
    if comm.rank == 0:
        hy, cy, enc, _ = model.encode(xs)
        send((hy, cy, enc), comm, dest=1)
        return hy
    hy, cy, enc = recv(comm, source=0)
    return hy, cy, enc, pad(xs, np) != PAD
    ### END SOLUTION
