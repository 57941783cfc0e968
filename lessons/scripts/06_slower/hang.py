"""Transcript C of lab 6: a hang. Rank 0 skips the allreduce the others wait in.

    dlhack run -n 3 --timeout 10 -- python hang.py
"""
import numpy as np
from mpi4py import MPI

comm = MPI.COMM_WORLD
grad = np.full(4, float(comm.rank))
if comm.rank != 0:  # meant to be every rank: rank 0 never joins, the others wait for it
    comm.Allreduce(MPI.IN_PLACE, grad)
print(f"rank {comm.rank} done: {grad}")
comm.Barrier()
