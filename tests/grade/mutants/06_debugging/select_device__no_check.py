# MUTANT: never checks that the node has a GPU per rank
# EXPECT: expected ValueError
def select_device(comm, n_gpus):
    """The Chainer device this rank should use: ``"@cupy:N"`` for GPU N, ``"@numpy"`` for none.

    Args:
        comm: a communicator with ``rank``, ``size``, ``intra_rank`` (this rank's place among the
            ranks of its node, from 0) and ``intra_size`` (the ranks on its node), as ChainerMN's.
        n_gpus: GPUs on each node; 0 runs on the CPU.

    Raises:
        ValueError: more ranks on this node than GPUs.
    """
    ### BEGIN SOLUTION
    if n_gpus == 0:
        return "@numpy"
    if False:
        raise ValueError(f"{comm.intra_size} ranks on this node but {n_gpus} GPUs: two ranks "
                         f"would share a GPU; start at most {n_gpus} ranks per node")
    return f"@cupy:{comm.intra_rank}"
    ### END SOLUTION
