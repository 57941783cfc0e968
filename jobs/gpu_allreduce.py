"""Allreduce on CuPy arrays, one GPU per rank: run by jobs/gpu_check.sh.

    mpiexec -n 2 python jobs/gpu_allreduce.py
    DLHACK_DEVICE=cpu mpiexec -n 2 python jobs/gpu_allreduce.py   # the same on numpy arrays

Checks, on every rank: our three algorithms (naive, ring, mpi) sum CuPy arrays correctly and
hand back CuPy arrays; ``multi_node_mean_grad`` averages the gradients of a link on the GPU;
ChainerMN's ``pure_nccl`` communicator does the same when CuPy has NCCL. Rank 0 prints one line
per check and the time of a 64 MiB allreduce; the exit status is 1 when a check fails.

Not yet run on a GPU: written on the course's CPU build machine (see jobs/README.md). With
``DLHACK_DEVICE=cpu`` it runs the same checks on numpy arrays (and skips NCCL): the stand-in that
the tests run under Slurm.
"""
import os
import sys
import time

import chainer
import chainer.links as L
import numpy as np
from mpi4py import MPI

from dlhack.parallel import create_communicator
from dlhack.parallel.devices import select_gpu

CPU = os.environ.get("DLHACK_DEVICE") == "cpu"
if CPU:
    xp = np
else:
    import cupy as xp
ARRAYS = "numpy" if CPU else "CuPy"


def synchronize():
    if not CPU:
        xp.cuda.get_current_stream().synchronize()


def device_of(comm):
    """GPU ``intra_rank % visible`` (``dlhack.parallel.devices``: every rank's choice checked)."""
    return chainer.get_device("@numpy" if CPU else f"@cupy:{select_gpu(comm)}")


def check(comm, name, ok, detail=""):
    oks = comm.gather_obj(bool(ok))
    if comm.rank == 0:
        print(f"{'OK  ' if all(oks) else 'FAIL'} {name} {detail}", flush=True)
    return all(comm.bcast_obj(oks))


def main():
    failed = False
    for algorithm in ("naive", "ring", "mpi"):
        comm = create_communicator(algorithm)
        device_of(comm).use()  # one GPU per rank on a node
        n = 16 << 20  # 64 MiB of float32
        x = xp.full(n, comm.rank + 1, dtype=xp.float32)
        comm.allreduce(x)  # warm up (buffers, connections)
        synchronize()
        comm.mpi_comm.Barrier()
        start = time.perf_counter()
        y = comm.allreduce(x)
        synchronize()
        seconds = comm.mpi_comm.allreduce(time.perf_counter() - start, op=MPI.MAX)
        expected = comm.size * (comm.size + 1) / 2
        ok = isinstance(y, xp.ndarray) and bool((y == expected).all())
        failed |= not check(comm, f"allreduce {algorithm:<5} on {ARRAYS}, {comm.size} rank(s)", ok,
                            f"64 MiB in {seconds * 1e3:.1f} ms")

    names = ["dlhack:ring"]
    try:
        if CPU:
            raise ImportError("no GPU")
        from cupy.cuda import nccl  # noqa: F401  (ChainerMN's pure_nccl needs it)

        names.append("chainermn:pure_nccl")
    except ImportError:
        if MPI.COMM_WORLD.rank == 0:
            print("SKIP chainermn:pure_nccl: CuPy has no NCCL (cupy.cuda.nccl does not import)")
    for name in names:
        comm = create_communicator(name.replace("dlhack:", ""))
        device = device_of(comm)
        device.use()
        link = L.Linear(3, 2)
        link.to_device(device)
        for param in link.params():
            param.grad = param.array * 0 + comm.rank  # rank r's gradient is all r
        comm.multi_node_mean_grad(link)
        mean = (comm.size - 1) / 2
        ok = all(np.allclose(chainer.backend.CpuDevice().send(p.grad), mean) for p in link.params())
        failed |= not check(comm, f"multi_node_mean_grad with {name}", ok)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
