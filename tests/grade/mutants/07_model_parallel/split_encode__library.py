# MUTANT: delegates to the library's split model (the code lesson 7 used to print)
# EXPECT: library's ModelParallelSeq2seq
# FAST
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
    from dlhack.parallel.model_parallel import ModelParallelSeq2seq

    if comm.rank == 0:
        return ModelParallelSeq2seq._send_encoding(model, xs)
    return ModelParallelSeq2seq.encode(model, xs)
    ### END SOLUTION
