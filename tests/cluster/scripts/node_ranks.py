"""Print each rank's host and node-aware ranks, and check a ring allreduce across the nodes.

    jobs/fake_cluster.sh run -n 4 python tests/cluster/scripts/node_ranks.py

Rank 0 prints one line per rank, ``rank R host H intra I/IS inter N/NS``, then
``allreduce ok`` (or exits 1). Used by tests/cluster/test_fake_cluster.py.
"""
import sys

import numpy as np
from mpi4py import MPI

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
x = np.full(1 << 18, comm.rank + 1, np.float32)  # 1 MiB: several ring chunks per rank
y = comm.allreduce(x)
ok = bool((y == comm.size * (comm.size + 1) / 2).all())
rows = comm.gather_obj((comm.rank, MPI.Get_processor_name(), comm.intra_rank, comm.intra_size,
                        comm.inter_rank, comm.inter_size, ok))
if comm.rank == 0:
    for rank, host, intra_rank, intra_size, inter_rank, inter_size, _ in rows:
        print(f"rank {rank} host {host} intra {intra_rank}/{intra_size} "
              f"inter {inter_rank}/{inter_size}")
    print("allreduce ok" if all(r[6] for r in rows) else "allreduce WRONG", flush=True)
sys.exit(0 if comm.allreduce_obj(int(not ok)) == 0 else 1)
