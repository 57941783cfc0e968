"""Slow (f2): a tiny batch per rank.

    mpiexec -n 2 python 07_tiny_batch_broken.py
    python 07_tiny_batch_broken.py                 # one process, for comparison

The one-process recipe used a batch of 4; here it is divided among the ranks, so each rank
computes 2 sentences per step. The costs that do not shrink with the batch (the allreduce of the
whole gradient, the optimizer's update of every weight, Python's overhead per step) then
dominate: the 2-rank run handles fewer sentences per second than one process.
"""
from profiled import profile_steps, show

from dlhack.parallel import create_communicator

GLOBAL_BATCH = 4
comm = create_communicator("ring")
batchsize = GLOBAL_BATCH // comm.size  # BUG: the per-rank batch shrinks as ranks are added
summary, speed = profile_steps(comm, batchsize=batchsize)
show(comm, summary, speed, batchsize=batchsize)
