"""Fix (c): broadcast what only rank 0 read; and launch so that an error cannot hang the job.

    mpiexec -n 2 python -m mpi4py 03_one_rank_raises_fixed.py
"""
import json
from pathlib import Path

from mpi4py import MPI

comm = MPI.COMM_WORLD
settings = None
if comm.rank == 0:
    settings = json.loads(Path(__file__).with_name("settings.json").read_text())
settings = comm.bcast(settings, root=0)  # FIX: every rank gets rank 0's copy
batchsize = settings["batchsize"]
total = comm.allreduce(batchsize)  # every rank waits here for all the others
if comm.rank == 0:
    print(f"global batch: {total} sentences")
