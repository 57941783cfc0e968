# MUTANT: returns at the first DONE: the other workers wait for ever
# EXPECT: sent DONE
import numpy as np
from mpi4py import MPI

GRAD, PARAMS, DONE = 1, 2, 3  # message tags: gradient, parameters, "no more gradients"


def async_server(comm, params, n_workers, lr):
    """Serve gradients in arrival order, as an asynchronous parameter server on rank 0.

    Args:
        comm: an mpi4py communicator; this rank is the server, ranks 1..n_workers are workers.
        params: the parameters, a float32 numpy vector at version 0; update it in place.
        n_workers: how many workers; each sends gradients (tag GRAD), then one DONE.
        lr: the learning rate: each gradient ``g`` is applied as ``params -= lr * g``.

    Returns:
        A list of ints, one per applied gradient in the order applied: its staleness, the number
        of updates the server made since it sent that worker the parameters it used.
    """
    ### BEGIN SOLUTION
    status = MPI.Status()
    grad, done = np.empty_like(params), np.empty(0, np.float32)
    version, sent = 0, {w: 0 for w in range(1, n_workers + 1)}
    n_done, staleness = 0, []
    while n_done < n_workers:
        comm.Probe(source=MPI.ANY_SOURCE, tag=MPI.ANY_TAG, status=status)
        src, tag = status.Get_source(), status.Get_tag()
        if tag == DONE:
            comm.Recv(done, source=src, tag=DONE)
            return staleness
        comm.Recv(grad, source=src, tag=GRAD)
        staleness.append(version - sent[src])
        params -= lr * grad
        version += 1
        comm.Send(params, dest=src, tag=PARAMS)
        sent[src] = version
    return staleness
    ### END SOLUTION
