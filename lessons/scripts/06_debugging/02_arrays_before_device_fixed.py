"""Fix (b): choose the device first, before any array exists (as dlhack.train does).

    dlhack run -n 2 -- python 02_arrays_before_device_fixed.py
"""
import fakegpu
import numpy as np

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
fakegpu.use(comm.intra_rank, exclusive=False)  # FIX: the very first thing after the communicator
batch = fakegpu.asarray(np.ones((4, 8), np.float32))
weights = fakegpu.asarray(np.ones((8, 3), np.float32))
out = batch @ weights
print(f"rank {comm.rank}: output {out}")
