"""Point-to-point send and receive of Chainer variables (dlhack.parallel.p2p): what crosses the
wire each way, counted, and the gradients that flow back to the sender."""
import chainer
import numpy as np
import pytest

from dlhack.parallel.counting import CountingComm
from dlhack.parallel.p2p import Traffic, recv, send


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_p2p_messages_bytes_and_gradients(mpi_comm):
    """send/recv of k arrays: 1 + k messages each way, the arrays' bytes, counted by Traffic."""
    counting, traffic = CountingComm(mpi_comm), Traffic()
    a = chainer.Variable(np.arange(6, dtype=np.float32).reshape(2, 3))
    b = chainer.Variable(np.ones(4, np.float32))
    if mpi_comm.rank == 0:
        delegate = send((a, b), counting, dest=1, traffic=traffic)
        delegate.backward()
    else:
        got_a, _ = recv(counting, source=0, traffic=traffic)  # b's gradient: sent as zeros
        chainer.functions.sum(2 * got_a).backward()
    calls, sent = counting.reset()

    nbytes = a.array.nbytes + b.array.nbytes
    assert calls["send"] + calls["Send"] == traffic.messages == 3
    assert sent["Send"] == nbytes
    if mpi_comm.rank == 0:
        assert (traffic.forward_bytes, traffic.backward_bytes) == (nbytes, 0)
        np.testing.assert_array_equal(a.grad, np.full((2, 3), 2, np.float32))
        np.testing.assert_array_equal(b.grad, np.zeros(4, np.float32))
    else:
        assert (traffic.forward_bytes, traffic.backward_bytes) == (0, nbytes)
