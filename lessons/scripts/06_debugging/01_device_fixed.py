"""Fix (a): each rank uses GPU ``intra_rank``, its place among the ranks on its node.

    dlhack run -n 2 -- python 01_device_fixed.py
    mpiexec -n 2 -env DLHACK_HOSTNAME a python 01_device_fixed.py : \\
            -n 2 -env DLHACK_HOSTNAME b python 01_device_fixed.py     # two pretend nodes

``comm.rank`` would be wrong too: it counts ranks over all nodes, so on two nodes of 2 GPUs
rank 2 would ask for a GPU 2 that does not exist. ``intra_rank`` starts again at 0 on each node.
"""
import fakegpu

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
device_id = comm.intra_rank  # FIX: 0, 1, ... on every node
fakegpu.use(device_id)  # real code: chainer.get_device(f"@cupy:{device_id}").use()
print(f"rank {comm.rank} (intra_rank {comm.intra_rank}) uses GPU {device_id}")
comm.mpi_comm.Barrier()  # training would start here
