"""intra_rank/intra_size/inter_rank/inter_size from (faked) host names."""
import chainermn
import pytest

from dlhack.parallel import create_communicator
from dlhack.parallel.hosts import HOSTNAME_ENV, host_ranks


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_host_ranks(mpi_comm, monkeypatch):
    rank, size = mpi_comm.rank, mpi_comm.size
    n_nodes = (size + 1) // 2

    # Blocks of two: ranks 0,1 on node0, 2,3 on node1 (at 3 ranks, node1 holds rank 2 alone).
    blocks = host_ranks(mpi_comm, hostname=f"node{rank // 2}")
    # Round robin: ranks 0,2 on "b", 1,3 on "a": nodes are numbered by their lowest rank.
    robin = host_ranks(mpi_comm, hostname="ba"[rank % 2])
    # The environment variable, read when no hostname is given.
    monkeypatch.setenv(HOSTNAME_ENV, f"env{rank // 2}")
    from_env = create_communicator("ring", mpi_comm=mpi_comm)
    monkeypatch.delenv(HOSTNAME_ENV)
    # The real names: one machine, so the same answer as ChainerMN's.
    real = host_ranks(mpi_comm)
    theirs = chainermn.create_communicator("naive", mpi_comm=mpi_comm)

    assert blocks == (rank % 2, min(2, size - 2 * (rank // 2)), rank // 2, n_nodes)
    assert robin == (rank // 2, len(range(rank % 2, size, 2)), rank % 2, min(size, 2))
    assert (from_env.intra_rank, from_env.intra_size, from_env.inter_rank,
            from_env.inter_size) == blocks
    assert real == (rank, size, 0, 1)
    assert real == (theirs.intra_rank, theirs.intra_size, theirs.inter_rank, theirs.inter_size)
