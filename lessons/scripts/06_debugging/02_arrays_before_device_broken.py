"""Bug (b): an array created before the device is chosen. [SIMULATED GPUs: fakegpu.py]

    dlhack run -n 2 -- python 02_arrays_before_device_broken.py

The batch is made on the current device, which is GPU 0 until ``use`` is called; the model then
goes to GPU ``intra_rank``. Rank 0 is lucky (0 == 0); rank 1 fails with CuPy's "Array device
must be same as the current device: array device = 0 while current = 1". Even without an error,
every rank that touched GPU 0 first has a CUDA context there (a few hundred MB each on GPU 0).
"""
import fakegpu
import numpy as np

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
batch = fakegpu.asarray(np.ones((4, 8), np.float32))  # BUG: made before the device is set
fakegpu.use(comm.intra_rank, exclusive=False)
weights = fakegpu.asarray(np.ones((8, 3), np.float32))  # the model, on this rank's GPU
out = batch @ weights
print(f"rank {comm.rank}: output {out}")
