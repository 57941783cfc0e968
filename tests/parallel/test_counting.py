"""The counting communicator (dlhack.parallel.counting): what it counts for each kind of call,
checked against the bytes each call is known to move."""
import numpy as np
import pytest
from mpi4py import MPI

from dlhack.parallel.counting import CountingComm, payload_bytes


def test_payload_bytes_of_arrays_buffers_and_objects():
    x = np.zeros(5, np.float32)
    assert payload_bytes(x) == 20
    assert payload_bytes([x, MPI.FLOAT]) == 20
    assert payload_bytes({"a": 1}) > 0  # pickled


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=60)
def test_each_kind_of_call_counts_what_travels(mpi_comm):
    counting = CountingComm(mpi_comm)
    rank, size = mpi_comm.rank, mpi_comm.size
    x = np.full(6, rank, np.float64)  # 48 bytes
    counting.Allreduce(MPI.IN_PLACE, x)
    assert x[0] == size * (size - 1) / 2  # the call still does its work
    counting.Bcast(x, root=0)
    counting.gather(rank, root=0)
    if size > 1:
        if rank == 0:
            counting.Send(x, dest=1)
        elif rank == 1:
            counting.Recv(x, source=0)
    messages, total = counting.totals()
    calls, sent = counting.reset()
    assert calls["Allreduce"] == calls["Bcast"] == calls["gather"] == 1
    assert sent["Allreduce"] == 48
    assert sent["Bcast"] == (48 if rank == 0 else 0)  # the root's copy is what is broadcast
    assert (sent["gather"] > 0) == (rank != 0)  # the root's own part does not travel
    assert sent["Send"] == (48 if size > 1 and rank == 0 else 0)
    assert sent["Recv"] == 0 and calls["Recv"] == (1 if size > 1 and rank == 1 else 0)
    assert messages == 3 + (size > 1 and rank == 0) and total == sum(sent.values())
    assert counting.reset() == ({}, {})  # reset forgot it
