"""Data parallelism over mpi4py, written to be read: what ChainerMN does, one idea per file.

The data-parallel diff of a training script is these few lines (as in ChainerMN's examples)::

    comm = create_communicator("ring")                       # or "chainermn:naive"
    train = scatter_dataset(train if comm.rank == 0 else None, comm, shuffle=True, seed=0)
    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
    evaluator = create_multi_node_evaluator(extensions.Evaluator(dev_iter, model), comm)
    if comm.rank == 0:                                       # only rank 0 prints and writes
        trainer.extend(extensions.LogReport())

Modules, in reading order:

- ``allreduce_naive``  sum through a root with Send/Recv (the parameter-server shape; slow)
- ``allreduce_ring``   reduce-scatter + allgather around a ring (fast)
- ``allreduce_mpi``    MPI's own Allreduce (the reference)
- ``hosts``            intra_rank / inter_rank from host names
- ``communicator``     ranks, bcast_data, multi_node_mean_grad, object messages
- ``optimizer``        the multi-node optimizer
- ``scatter``          dataset and index scattering
- ``evaluator``        sample-weighted evaluation and corpus BLEU over ranks
- ``equivalence``      N ranks x batch b == one process x batch N*b, the check
"""
from dlhack.parallel.communicator import Communicator, create_communicator
from dlhack.parallel.evaluator import create_multi_node_evaluator, gather_corpus_bleu
from dlhack.parallel.optimizer import create_multi_node_optimizer
from dlhack.parallel.scatter import (
    scatter_dataset,
    scatter_index,
    scatter_subdataset,
    shard_indices,
)

__all__ = [
    "Communicator",
    "create_communicator",
    "create_multi_node_evaluator",
    "create_multi_node_optimizer",
    "gather_corpus_bleu",
    "scatter_dataset",
    "scatter_index",
    "scatter_subdataset",
    "shard_indices",
]
