"""The ``%%mpiexec`` cell magic, driven through a real Jupyter kernel of this environment.

The kernel is started as ``python -m ipykernel_launcher`` from this very Python, through a kernel
spec written for the test, so no registered kernel is needed.
"""
import json
import sys
import time

import pytest
from jupyter_client import KernelManager
from jupyter_client.kernelspec import KernelSpecManager

HELLO = """%%mpiexec -n 2 --timeout 60
from mpi4py import MPI
print("hello from", MPI.COMM_WORLD.rank)
"""
DEADLOCK = """%%mpiexec -n 2 --timeout {timeout}
from mpi4py import MPI
comm = MPI.COMM_WORLD
print("rank", comm.rank, "starts")
if comm.rank == 0:
    comm.recv(source=1)
else:
    comm.barrier()
"""


@pytest.fixture(scope="module")
def kernel(tmp_path_factory):
    """A started kernel and its client, with ``%load_ext dlhack`` already run."""
    kernels = tmp_path_factory.mktemp("kernels")
    spec = kernels / "dlhack-test"
    spec.mkdir()
    argv = [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"]
    (spec / "kernel.json").write_text(json.dumps(
        {"argv": argv, "display_name": "dlhack test", "language": "python"}))
    km = KernelManager(kernel_name="dlhack-test",
                       kernel_spec_manager=KernelSpecManager(kernel_dirs=[str(kernels)]))
    km.start_kernel()
    client = km.client()
    client.start_channels()
    try:
        client.wait_for_ready(timeout=60)
        reply, _ = execute(client, "%load_ext dlhack")
        assert reply["content"]["status"] == "ok"
        yield km, client
    finally:
        client.stop_channels()
        km.shutdown_kernel(now=True)


def execute(client, code, timeout=60):
    """Run ``code`` in the kernel; returns the reply and everything it printed."""
    printed = []

    def keep(msg):
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
        elif msg["msg_type"] == "error":
            printed.append("\n".join(msg["content"]["traceback"]))

    reply = client.execute_interactive(code, output_hook=keep, timeout=timeout)
    return reply, "".join(printed)


def test_a_cell_runs_on_two_ranks(kernel):
    _, client = kernel
    reply, text = execute(client, HELLO)
    assert reply["content"]["status"] == "ok"
    assert "[0] hello from 0" in text and "[1] hello from 1" in text
    assert "every rank finished." in text


def test_a_deadlocked_cell_ends_at_its_timeout(kernel, leftovers):
    km, client = kernel
    start = time.monotonic()
    _, text = execute(client, DEADLOCK.format(timeout=3))
    assert time.monotonic() - start < 20
    assert "timed out after 3 s" in text
    assert "rank 0 is waiting in comm.recv (cell.py:5)" in text
    assert "rank 1 is waiting in comm.barrier (cell.py:7)" in text
    assert leftovers(below=km.provisioner.pid) == []  # nothing the kernel started


def test_interrupting_the_kernel_kills_the_job(kernel, leftovers):
    km, client = kernel
    msg_id = client.execute(DEADLOCK.format(timeout=120))
    printed, start = [], time.monotonic()
    interrupted = False
    while True:
        msg = client.get_iopub_msg(timeout=60)
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        if msg["msg_type"] == "stream":
            printed.append(msg["content"]["text"])
            if not interrupted and "[1] rank 1 starts" in "".join(printed):
                km.interrupt_kernel()  # what the notebook's stop button does
                interrupted = True
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            break
    text = "".join(printed)
    assert interrupted and time.monotonic() - start < 30
    assert "interrupted: the job was killed" in text
    assert "rank 0 is waiting in comm.recv" in text
    assert leftovers(below=km.provisioner.pid) == []  # nothing the kernel started
