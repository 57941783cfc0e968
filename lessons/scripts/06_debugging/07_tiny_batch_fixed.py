"""Fix (f2): keep the batch per rank large enough (the global batch grows with the ranks).

    mpiexec -n 2 python 07_tiny_batch_fixed.py

A larger global batch takes fewer, larger steps: raise the learning rate with it (the linear
scaling rule, with a warm-up) and check the dev BLEU, as lesson 4 does.
"""
from profiled import profile_steps, show

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
batchsize = 32  # FIX: per rank; the global batch is 32 x ranks
summary, speed = profile_steps(comm, batchsize=batchsize)
show(comm, summary, speed, batchsize=batchsize)
