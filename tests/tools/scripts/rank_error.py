"""A bug on rank 1 only: a rank-dependent branch reads past the end of its shard.

Rank 1 raises just before a collective that rank 0 has already entered. Without MPI_Abort (which
`dlhack run`'s wrapper calls on an uncaught exception) rank 0 would wait in the allreduce forever:
try `timeout 20 mpiexec -n 2 python rank_error.py`.
"""
from mpi4py import MPI

comm = MPI.COMM_WORLD
shard = [1, 2, 3]
if comm.rank == 1:
    first_extra = shard[len(shard)]  # IndexError: the off-by-one lives on rank 1 only
total = comm.allreduce(len(shard))  # rank 0 waits here for rank 1's part
print(f"rank {comm.rank}: {total} samples in all")
