"""Slow (f1): every rank runs as many BLAS threads as the machine has cores.

    env -u OMP_NUM_THREADS -u OPENBLAS_NUM_THREADS mpiexec -n 2 python 06_threads_broken.py

With OMP_NUM_THREADS (and OPENBLAS_NUM_THREADS) unset, OpenBLAS starts one thread per core in
*every* rank: 2 ranks on 2 cores run 4 threads, which take turns on the cores and spin while
they wait for each other. Forward and backward slow down; the verdict says "oversubscribed".
"""
from profiled import profile_steps, show

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
summary, speed = profile_steps(comm, batchsize=32)  # BUG: nothing limits the BLAS threads
show(comm, summary, speed, batchsize=32)
