"""A deadlock: rank 0 waits for a message that rank 1 never sends (rank 1 waits in a barrier)."""
from mpi4py import MPI

comm = MPI.COMM_WORLD
print(f"rank {comm.rank} starts")
if comm.rank == 0:
    data = comm.recv(source=1)  # rank 1 never sends: the classic forgotten send
else:
    comm.barrier()  # rank 0 never gets here
print("never printed")
