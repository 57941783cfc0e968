"""Which GPU each rank takes (dlhack.parallel.devices): ``intra_rank % visible``, and the layout
checked, with a pretend GPU count and pretend hardware addresses (no GPU needed).

The two ways a site shows GPUs to ranks: every rank of a node sees them all (rank k takes GPU k),
or each sees only its own (``--gpus-per-task``: every rank takes its GPU 0, and the addresses
differ). The mistake to catch: ranks of a node that end up on one GPU.
"""
import pytest

from dlhack.parallel import create_communicator
from dlhack.parallel.devices import LayoutError, gpu_index, layout_problem, select_gpu


def test_every_rank_sees_every_gpu_of_its_node():
    assert [gpu_index(k, 4) for k in range(4)] == [0, 1, 2, 3]


def test_each_rank_sees_only_its_own_gpu():
    """The old ``intra_rank`` asked rank 1 for GPU 1, which it cannot see under --gpus-per-task."""
    assert [gpu_index(k, 1) for k in range(4)] == [0, 0, 0, 0]


def test_a_rank_that_sees_no_gpu_is_told_why(monkeypatch):
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "")
    with pytest.raises(LayoutError, match="CUDA_VISIBLE_DEVICES=''"):
        gpu_index(0, 0)


def test_one_gpu_per_rank_is_a_good_layout():
    # (rank, node, address, error): GPUs 0 and 1 of one node, whether each rank saw both (and
    # took GPU intra_rank) or saw only its own (and took its GPU 0): the addresses tell
    one_node = [(0, 0, "bus:a", None), (1, 0, "bus:b", None)]
    two_nodes = [(0, 0, "bus:a", None), (1, 1, "bus:a", None)]  # same address, other node
    assert layout_problem(one_node) is None
    assert layout_problem(two_nodes) is None


def test_ranks_that_would_share_a_gpu_are_named():
    """Three ranks on a node of two GPUs: ranks 0 and 2 both take GPU 0."""
    choices = [(0, 0, "bus:a", None), (1, 0, "bus:b", None), (2, 0, "bus:a", None)]
    problem = layout_problem(choices)
    assert "ranks 0, 2 would share one GPU (bus:a) on node 0" in problem
    assert "3 ranks there, 2 GPU(s)" in problem
    assert layout_problem(choices, share=True) is None


def test_a_rank_without_a_gpu_is_reported_even_when_sharing():
    choices = [(0, 0, "bus:a", None), (1, 0, None, "this rank sees no GPU")]
    assert layout_problem(choices, share=True) == "rank 1: this rank sees no GPU"


class Alone:
    """A communicator of one rank on its node (the ``gather``/``bcast`` a size-1 run sees)."""
    rank = intra_rank = inter_rank = 0

    def gather_obj(self, obj, root=0):
        return [obj]

    def bcast_obj(self, obj, root=0):
        return obj


def test_one_rank_takes_gpu_0_of_those_it_sees():
    assert select_gpu(Alone(), visible=3, address=lambda i: f"bus:{i}") == 0
    with pytest.raises(LayoutError, match="sees no GPU"):
        select_gpu(Alone(), visible=0)


def test_a_broken_gpu_is_a_layout_error_not_a_crash():
    def broken(index):
        raise RuntimeError("cudaErrorDevicesUnavailable")

    with pytest.raises(LayoutError, match="RuntimeError: cudaErrorDevicesUnavailable"):
        select_gpu(Alone(), visible=1, address=broken)


def layouts(rank, size):
    """``{name: (visible, address)}`` of this rank for every layout, on one node."""
    return {
        "sees all": (size, lambda i: f"bus:{i}"),
        "per task": (1, lambda i: f"bus:{rank}"),  # its own GPU, numbered 0 in this rank
        "one for all": (1, lambda i: "bus:0"),  # the mistake: every rank on the node's GPU 0
        "rank 1 sees none": (0 if rank == 1 else size, lambda i: f"bus:{i}"),
    }


@pytest.mark.mpi(ranks=[2, 3], timeout=60)
def test_every_rank_agrees_on_the_layout(mpi_comm):
    """Every rank gets the same verdict (no rank left waiting in a collective); ranks on one
    node, so ``intra_rank == rank``."""
    comm = create_communicator("naive", mpi_comm=mpi_comm)
    got = {}
    for name, (visible, address) in layouts(comm.rank, comm.size).items():
        try:
            got[name] = select_gpu(comm, visible=visible, address=address)
        except LayoutError as exc:
            got[name] = str(exc)
    shared = select_gpu(comm, visible=1, address=lambda i: "bus:0", share=True)
    everyone = mpi_comm.allgather(got)

    assert got["sees all"] == comm.intra_rank == comm.rank
    assert got["per task"] == 0 and shared == 0
    assert got["one for all"].startswith(f"ranks {', '.join(map(str, range(comm.size)))} would "
                                         f"share one GPU (bus:0)"), got
    assert got["rank 1 sees none"].startswith("rank 1: this rank sees no GPU"), got
    for name in ("one for all", "rank 1 sees none"):
        assert len({other[name] for other in everyone}) == 1  # the same message on every rank
