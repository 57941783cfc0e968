"""grade/pmpi.py and pmpi_shim.c: the shim builds with the venv's mpicc and, loaded ahead of
libmpi in two ranks, logs each send (dest, count, the payload's head), receive and collective
between the grader's marks; a changed source gets a new library name."""
import ctypes
import os
import subprocess
import sys

import pytest

from dlhack.grade import pmpi, traffic
from dlhack.jobs.mpiexec import find_mpiexec, one_thread_env

RANKS = '''
import ctypes, os, sys
shim = ctypes.CDLL(sys.argv[1], mode=os.RTLD_GLOBAL)
import numpy as np
from mpi4py import MPI
comm = MPI.COMM_WORLD.Dup()
shim.MPI_Pcontrol(1001)
if comm.rank == 0:
    comm.Send(np.arange(5, dtype=np.float64), dest=1, tag=7)
    comm.send({"x": np.arange(3.0)}, dest=1)
else:
    buf = np.empty(5)
    comm.Recv(buf, source=0, tag=7)
    comm.recv(source=0)
comm.Allreduce(MPI.IN_PLACE, np.ones(4), op=MPI.SUM)
shim.MPI_Pcontrol(1002)
os.environ["DLHACK_HOSTNAME"] = f"node{comm.rank}"
names = comm.gather(f"{comm.rank} {MPI.Get_processor_name()}", root=0)  # one line, one writer
if comm.rank == 0:
    print("|".join(names), flush=True)
'''


@pytest.fixture(scope="module")
def shim():
    path, why = pmpi.shim()
    if path is None:
        pytest.skip(why)
    return path


def test_the_shim_logs_what_each_rank_sends(shim, tmp_path):
    mpiexec = find_mpiexec(default=None)
    env = {**one_thread_env(), "DLHACK_TRAFFIC": str(tmp_path)}
    proc = subprocess.run([mpiexec, "-n", "2", sys.executable, "-c", RANKS, str(shim)], env=env,
                          check=True, timeout=60, capture_output=True, text=True)
    # MPI_Get_processor_name answers the simulated host (what ChainerMN groups ranks by)
    assert proc.stdout.split("\n")[0] == "0 node0|1 node1"
    zero, one = traffic.read(tmp_path, 0, 0), traffic.read(tmp_path, 1, 0)
    first, second = zero.sends
    assert (first.dest, first.tag, first.count, first.typesize) == (1, 7, 5, 8)
    assert first.head == bytes(__import__("numpy").arange(5, dtype="float64"))
    assert second.pickled and second.data_bytes() == 24
    # (comm.recv of a pickle goes through MPI_Mprobe and MPI_Mrecv, which the shim does not log)
    assert not one.sends and [r.peer for r in one.receives] == [0]
    assert [c.kind.split("_")[0] for c in zero.collectives] == ["Allreduce"]


def test_the_library_name_follows_the_source_and_the_compiler(shim):
    mpicc = pmpi.find_mpicc()
    assert pmpi.file_name(mpicc) == os.path.basename(shim)
    ctypes.CDLL(str(shim))  # it loads (it needs libmpi, found beside it)
