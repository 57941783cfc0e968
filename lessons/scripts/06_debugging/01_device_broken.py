"""Bug (a): every rank uses GPU 0. [SIMULATED GPUs: fakegpu.py stands in for CUDA]

    dlhack run -n 2 -- python 01_device_broken.py

Symptom: rank 0 starts, rank 1 fails: "cudaErrorDevicesUnavailable: all CUDA-capable devices
are busy or unavailable" (GPUs in exclusive-process mode). In the default mode there is no error
at all: both ranks share GPU 0, at half the speed, while GPU 1 idles (``nvidia-smi`` shows two
processes on GPU 0).
"""
import fakegpu

from dlhack.parallel import create_communicator

comm = create_communicator("ring")
device_id = 0  # BUG: the same GPU for every rank of the node
fakegpu.use(device_id)  # real code: chainer.get_device(f"@cupy:{device_id}").use()
print(f"rank {comm.rank} (intra_rank {comm.intra_rank}) uses GPU {device_id}")
comm.mpi_comm.Barrier()  # training would start here
