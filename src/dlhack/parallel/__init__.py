"""Data parallelism over mpi4py, written to be read: what ChainerMN does, one idea per file.

The data-parallel diff of a training script is these few lines (as in ChainerMN's examples)::

    comm = create_communicator("ring")                       # or "chainermn:naive"
    train = scatter_dataset(train if comm.rank == 0 else None, comm, shuffle=True, seed=0)
    optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm)
    evaluator = create_multi_node_evaluator(extensions.Evaluator(dev_iter, model), comm)
    if comm.rank == 0:                                       # only rank 0 prints and writes
        trainer.extend(extensions.LogReport())

Modules, in reading order (each one that sends says what a step or a call costs, in messages
and bytes):

- ``allreduce_naive``      lesson 2: sum through a root with Send/Recv (the naive one; slow)
- ``allreduce_ring``       lesson 2: reduce-scatter + allgather around a ring (fast)
- ``allreduce_mpi``        lesson 2: MPI's own Allreduce (the reference)
- ``hosts``                lesson 3: intra_rank / inter_rank from host names
- ``communicator``         lesson 3: ranks, bcast_data, multi_node_mean_grad, object messages
- ``shared_memory``        its fast sibling on one node: the means added in shared memory
- ``wrapper``              lesson 3: what every multi-node optimizer shares (forwarding, broadcast)
- ``optimizer``            lesson 3: the multi-node optimizer, naive (``MultiNodeOptimizer``)
                           beside overlapped (``OverlappedMultiNodeOptimizer``, lesson 9)
- ``sharded``              its sibling on one node: each rank updates its chunk of the weights
- ``scatter``              lesson 3: dataset and index scattering
- ``evaluator``            lesson 3: sample-weighted evaluation and corpus BLEU over ranks
- ``equivalence``          lesson 3: N ranks x batch b == one process x batch N*b, the check
- ``paramserver``          lesson 4: parameter server, sync and async, beside allreduce
- ``paramserver_problem``  lesson 4: the toy problem it trains, and the serial reference
- ``schedules``            lesson 5: learning-rate and batch-size schedules for large batches
- ``p2p``                  lesson 7: send/recv of variables whose gradients flow back
- ``model_parallel``       lesson 7: the translator split over two ranks, encoder and decoder
- ``tensor_parallel``      lesson 7: one layer split over ranks, the output layer by vocabulary
- ``counting``             lesson 7: a communicator wrapper that counts messages and bytes
- ``devices``              lesson 8: the GPU of each rank, ``intra_rank % visible``, checked
- ``overlap``              lesson 9: the overlapped path's hook and its ``Bucket``s, allreduced
                           while backward runs (``overlap=True``)
- ``slowlink``             lesson 9: a communicator whose allreduce takes alpha + n beta
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
