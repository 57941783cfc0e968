"""Every rank says who it is: the plain case for `dlhack run`."""
from mpi4py import MPI

comm = MPI.COMM_WORLD
print(f"hello from rank {comm.rank} of {comm.size}")
total = comm.allreduce(comm.rank)
print(f"rank {comm.rank}: the ranks add up to {total}")
