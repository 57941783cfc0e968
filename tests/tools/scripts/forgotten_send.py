"""A deadlock where one side is already gone: rank 1 finishes without the send rank 0 waits for."""
from mpi4py import MPI

comm = MPI.COMM_WORLD
if comm.rank == 0:
    weights = comm.recv(source=1)  # waits for ever: rank 1 below forgot comm.send(weights, dest=0)
print(f"rank {comm.rank} done")
