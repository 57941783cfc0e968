"""Bug (c): an exception on one rank leaves the others waiting forever.

    timeout 20 mpiexec -n 2 python 03_one_rank_raises_broken.py    # hangs: killed after 20 s
    mpiexec -n 2 python -m mpi4py 03_one_rank_raises_broken.py     # aborts at once
    dlhack run -n 2 -- python 03_one_rank_raises_broken.py         # aborts: "on rank 1 only"

Rank 0 reads the settings; the broadcast to the other ranks was forgotten, so on rank 1
``settings`` is None and it raises TypeError. Rank 0 goes on into the allreduce and waits for
rank 1, which never comes: at exit, Python on rank 1 calls MPI_Finalize, which waits for rank 0.
Nothing ends. ``python -m mpi4py`` (and ``dlhack run``) call MPI_Abort on an uncaught exception
instead, which ends every rank.
"""
import json
from pathlib import Path

from mpi4py import MPI

comm = MPI.COMM_WORLD
settings = None
if comm.rank == 0:
    settings = json.loads(Path(__file__).with_name("settings.json").read_text())
# BUG: the other ranks never receive the settings (missing: settings = comm.bcast(settings))
batchsize = settings["batchsize"]
total = comm.allreduce(batchsize)  # every rank waits here for all the others
if comm.rank == 0:
    print(f"global batch: {total} sentences")
