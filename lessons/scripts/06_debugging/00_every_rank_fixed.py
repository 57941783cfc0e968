"""Fix (0): the name settings.json uses. Found in one process, with no MPI in the way.

    dlhack run -n 2 -- python 00_every_rank_fixed.py
"""
import json
from pathlib import Path

from mpi4py import MPI

comm = MPI.COMM_WORLD
settings = None
if comm.rank == 0:
    settings = json.loads(Path(__file__).with_name("settings.json").read_text())
settings = comm.bcast(settings, root=0)
lr = settings["lr"]  # FIX: the file's own name for it
total = comm.allreduce(settings["batchsize"])
if comm.rank == 0:
    print(f"global batch: {total} sentences, learning rate {lr}")
