"""Bug (0): an ordinary bug, the same on every rank: a setting read under a name it lacks.

    dlhack run -n 2 -- python 00_every_rank_broken.py      # the same error on 2 of 2 ranks
    dlhack run --single -- python 00_every_rank_broken.py  # and in one process: debug it there

Rank 0 reads the settings and sends them to every rank, as it should; then every rank asks for
"learning_rate", a name the file does not have. Nothing here depends on the rank, so every rank
raises the same KeyError, and one process raises it too.
"""
import json
from pathlib import Path

from mpi4py import MPI

comm = MPI.COMM_WORLD
settings = None
if comm.rank == 0:
    settings = json.loads(Path(__file__).with_name("settings.json").read_text())
settings = comm.bcast(settings, root=0)
lr = settings["learning_rate"]  # BUG: settings.json calls it "lr"
total = comm.allreduce(settings["batchsize"])
if comm.rank == 0:
    print(f"global batch: {total} sentences, learning rate {lr}")
