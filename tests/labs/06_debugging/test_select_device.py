"""Exercise 1 of lab 06: ``select_device(comm, n_gpus)``, the device each rank uses.

The communicator is a stand-in with ChainerMN's ``rank``, ``size``, ``intra_rank`` and
``intra_size``, on pretend nodes of two ranks each (at 3 ranks the second node holds one).
"""
import pytest
from lab06 import node_comm


def hint(got, node):
    if got == "@cupy:0" and node.intra_rank != 0:
        return ": every rank picks GPU 0, so the ranks of a node share one GPU and the others idle"
    if got == f"@cupy:{node.rank}" and node.rank != node.intra_rank:
        return (f": that is comm.rank ({node.rank}), which counts ranks over every node; this "
                f"node's GPUs are numbered from 0, so use the rank's place on its node")
    return ""


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[3, 4], timeout=20)
def test_one_gpu_per_rank_of_each_node(submission, comm):
    """Two ranks per node, two GPUs per node: rank r uses GPU intra_rank."""
    node = node_comm(comm, ranks_per_node=2)
    got = submission.select_device(node, 2)
    everyone = comm.allgather((node.inter_rank, got))
    want = f"@cupy:{node.intra_rank}"
    assert got == want, (f"intra_rank {node.intra_rank}: got {got!r}, expected {want!r}"
                         + hint(got, node))
    mine = [device for n, device in everyone if n == node.inter_rank]
    assert len(set(mine)) == len(mine), f"two ranks of node {node.inter_rank} share a GPU: {mine}"


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2], timeout=20)
def test_cpu_and_too_few_gpus(submission, comm):
    """No GPU: "@numpy". More ranks on a node than GPUs: a ValueError, before anything runs."""
    node = node_comm(comm, ranks_per_node=comm.size)  # every rank on one node
    got = submission.select_device(node, 0)
    assert got == "@numpy", (f"with n_gpus=0 every rank runs on the CPU: expected '@numpy', "
                             f"got {got!r}")
    with pytest.raises(ValueError):
        submission.select_device(node, comm.size - 1)  # one GPU short
        pytest.fail(f"{comm.size} ranks on one node with {comm.size - 1} GPUs: expected "
                    f"ValueError (two ranks would share a GPU), but select_device returned")
