"""A bug that does not depend on the rank: every rank divides by zero at the same line."""
from mpi4py import MPI

comm = MPI.COMM_WORLD
n_samples = 0  # every rank got an empty shard, by the same mistake
mean = comm.allreduce(10.0) / n_samples
print(mean)
