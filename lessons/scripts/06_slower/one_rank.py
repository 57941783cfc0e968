"""Transcript B of lab 6: one rank's exception (its shard is empty), the others abort with it.

    dlhack run -n 3 --timeout 20 -- python one_rank.py
"""
import numpy as np  # noqa: F401  (unused; kept so line numbers match transcript B)
from mpi4py import MPI

comm = MPI.COMM_WORLD
losses = [0.5, 0.25, 0.75, 1.0, 0.5]  # 5 dev losses, dealt 2 to each rank: the last rank has 1
mine = losses[2 * comm.rank:2 * comm.rank + 2]
if comm.rank == comm.size - 1 and len(mine) < 2:
    mine = []  # a shard that came out empty
mean = max(mine) and sum(mine) / len(mine)  # ValueError on an empty shard
print(f"mean loss {comm.allreduce(mean) / comm.size:.3f}")
