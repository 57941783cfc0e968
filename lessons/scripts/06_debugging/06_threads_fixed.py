"""Fix (f1): cores / ranks-per-node BLAS threads per rank (here: 1).

    env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS mpiexec -n 2 python 06_threads_fixed.py

The usual fix is in the launch line: ``OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1 mpiexec ...``
(or ``mpiexec -genv OMP_NUM_THREADS 1``; the job scripts in jobs/ export both). In code,
threadpoolctl sets the limit after numpy is loaded, whatever the environment says.
"""
import os

from profiled import profile_steps, show
from threadpoolctl import threadpool_limits

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
cores = len(os.sched_getaffinity(0))
threadpool_limits(max(1, cores // comm.intra_size))  # FIX: share the node's cores
summary, speed = profile_steps(comm, batchsize=32)
show(comm, summary, speed, batchsize=32)
