"""Exercise 1 of lab 06: ``select_device(comm, n_gpus)``, the device each rank uses.

The communicator is a stand-in with ChainerMN's ``rank``, ``size``, ``intra_rank`` and
``intra_size``, on pretend nodes of two ranks each, laid out in blocks (ranks 0, 1 on node 0) and
round-robin (ranks 0, 2 on node 0): an answer that only works for one layout earns nothing.
"""
from types import SimpleNamespace

import pytest
from lab06 import node_comm


def hint(got, node, n_gpus):
    if got == "@cupy:0" and node.intra_rank != 0:
        return ": every rank picks GPU 0, so the ranks of a node share one GPU and the others idle"
    if got == f"@cupy:{node.rank}" and node.rank != node.intra_rank:
        return (f": that is comm.rank ({node.rank}), which counts ranks over every node; this "
                f"node's GPUs are numbered from 0, so use the rank's place on its node")
    if got == f"@cupy:{node.rank % n_gpus}" and node.rank % n_gpus != node.intra_rank:
        return (f": that is comm.rank % n_gpus ({node.rank} % {n_gpus}), right only when each node holds "
                f"consecutive ranks; with ranks dealt round-robin it is not the rank's place on "
                f"its node (comm.intra_rank)")
    return ""


def placement_problem(submission, comm, layout, n_gpus=2, ranks_per_node=2):
    """The same answer on every rank: None, or what is wrong with the first rank that is wrong
    (every rank reaches the allgather and decides alike, so none is left waiting)."""
    node = node_comm(comm, ranks_per_node=ranks_per_node, layout=layout)
    got = submission.select_device(node, n_gpus)
    place = SimpleNamespace(rank=node.rank, intra_rank=node.intra_rank, inter_rank=node.inter_rank)
    everyone = comm.allgather((place, got if isinstance(got, str) else repr(got)))
    for other, device in everyone:
        want = f"@cupy:{other.intra_rank}"
        if device != want:
            return (f"with ranks laid out {layout}, rank {other.rank} (intra_rank "
                    f"{other.intra_rank} on node {other.inter_rank}) got {device!r}, expected "
                    f"{want!r}" + hint(device, other, n_gpus))
    return None


@pytest.mark.points(2)
@pytest.mark.mpi(ranks=[3, 4], timeout=20)
def test_one_gpu_per_rank_of_each_node(submission, comm):
    """Two ranks per node, two GPUs per node, in blocks and round-robin: GPU intra_rank."""
    for layout in ("block", "round-robin"):
        problem = placement_problem(submission, comm, layout)
        assert problem is None, problem


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[2], timeout=20)
def test_cpu_and_too_few_gpus(submission, comm):
    """No GPU: "@numpy". More ranks on a node than GPUs: a ValueError. One rank per node: GPU 0."""
    node = node_comm(comm, ranks_per_node=comm.size)  # every rank on one node
    got = submission.select_device(node, 0)
    assert got == "@numpy", (f"with n_gpus=0 every rank runs on the CPU: expected '@numpy', "
                             f"got {got!r}")
    with pytest.raises(ValueError):
        submission.select_device(node, comm.size - 1)  # one GPU short
        pytest.fail(f"{comm.size} ranks on one node with {comm.size - 1} GPUs: expected "
                    f"ValueError (two ranks would share a GPU), but select_device returned")
    problem = placement_problem(submission, comm, "round-robin", ranks_per_node=1)  # 2 nodes
    assert problem is None, problem
