"""Which ranks share a node: ``intra_rank``/``intra_size`` and ``inter_rank``/``inter_size``.

Every rank contributes its host name; ranks with the same name are on the same node.

- ``intra_rank``: my position among the ranks on my node (0, 1, ...), in rank order. On a GPU
  node it picks the GPU, ``intra_rank % visible GPUs`` (``devices.select_gpu``).
- ``intra_size``: how many ranks run on my node.
- ``inter_rank``: my node's number; nodes are numbered in the order of their lowest rank.
- ``inter_size``: how many nodes there are.

For tests and lessons on one machine the host name can be faked, per call (``hostname=``) or
per process (the ``DLHACK_HOSTNAME`` environment variable, e.g. with MPMD launch:
``mpiexec -n 2 -env DLHACK_HOSTNAME a python x.py : -n 2 -env DLHACK_HOSTNAME b python x.py``).

Cost: one ``allgather`` of the ``p`` host names, once, when a communicator is created.
"""
import os

from mpi4py import MPI

HOSTNAME_ENV = "DLHACK_HOSTNAME"


def host_name(hostname=None):
    """This rank's host name: ``hostname``, else ``$DLHACK_HOSTNAME``, else MPI's processor name."""
    return hostname or os.environ.get(HOSTNAME_ENV) or MPI.Get_processor_name()


def host_ranks(mpi_comm, hostname=None):
    """Compute this rank's place among nodes from every rank's host name (a collective call).

    Args:
        mpi_comm: an ``mpi4py.MPI.Comm``.
        hostname: pretend to run on this host (for tests); see ``host_name``.

    Returns:
        ``(intra_rank, intra_size, inter_rank, inter_size)``.
    """
    mine = host_name(hostname)
    names = mpi_comm.allgather(mine)  # names[r]: host of rank r, the same list on every rank
    nodes = list(dict.fromkeys(names))  # distinct names, in order of first (lowest) rank
    neighbours = [r for r, name in enumerate(names) if name == mine]
    return neighbours.index(mpi_comm.rank), len(neighbours), nodes.index(mine), len(nodes)
