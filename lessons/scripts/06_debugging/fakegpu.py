"""Pretend GPUs for lesson 6, on machines without any. SIMULATED: nothing here touches a GPU.

Two behaviours of real GPUs are imitated, the two behind the usual device bugs:

1. Exclusive-process mode (``nvidia-smi -c EXCLUSIVE_PROCESS``, how many clusters run their
   GPUs): a GPU serves one process at a time, and a second process that tries to use it fails
   with CUDA's "all CUDA-capable devices are busy or unavailable". Here ``use(i)`` binds a
   Unix socket named for GPU ``i`` of this node (Linux's abstract names: no file is left
   behind), which only one process can hold, until it ends. In the default mode (``exclusive=False``) two processes may share a GPU: no error,
   just half the speed and twice the memory, which is worse, because nothing tells you.
2. The current device: CuPy puts a new array on the *current* device, GPU 0 until
   ``cupy.cuda.Device(i).use()`` (or ``chainer.get_device("@cupy:i").use()``), and refuses an
   operation between an array and a current device that differ. Here ``asarray`` tags the
   array with the current device and ``@`` checks it. (Only ``use`` takes a GPU's lock here;
   on a real GPU in exclusive mode, the first array made on GPU 0 would claim GPU 0 as well.)

A "node" is a host name (``DLHACK_HOSTNAME`` fakes one, as in ``dlhack.parallel.hosts``) under
one mpiexec: ranks with the same name share that node's ``N_DEVICES`` pretend GPUs.
"""
import os
import socket

import numpy as np

N_DEVICES = int(os.environ.get("DLHACK_FAKE_GPUS", "2"))  # pretend GPUs per node
_current = 0  # like CUDA: device 0 until a device is chosen
_held = {}  # device id -> bound socket (kept open: closing it would free the GPU)


def _lock_name(device_id):
    host = os.environ.get("DLHACK_HOSTNAME") or socket.gethostname()
    # The ranks of one job share their parent (mpiexec's proxy); another job gets other GPUs.
    return f"\0dlhack-fakegpu-{os.getppid()}-{host}-gpu{device_id}"


def use(device_id, exclusive=True):
    """Make ``device_id`` this process's current device, as ``cupy.cuda.Device(i).use()``.

    Raises:
        RuntimeError: no such device on this node, or (``exclusive``) another process holds it.
    """
    global _current
    if not 0 <= device_id < N_DEVICES:
        raise RuntimeError(f"cudaErrorInvalidDevice: invalid device ordinal {device_id} "
                           f"(this node has {N_DEVICES} GPUs: 0..{N_DEVICES - 1}) [simulated]")
    if exclusive and device_id not in _held:
        lock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        try:
            lock.bind(_lock_name(device_id))
        except OSError:
            lock.close()
            raise RuntimeError(f"cudaErrorDevicesUnavailable: all CUDA-capable devices are busy "
                               f"or unavailable (GPU {device_id} is in exclusive-process mode "
                               f"and another process uses it) [simulated]") from None
        _held[device_id] = lock
    _current = device_id


def current():
    """The current device id."""
    return _current


class FakeArray:
    """A numpy array that remembers the device it was created on."""

    def __init__(self, data, device):
        self.data, self.device = data, device

    def __matmul__(self, other):
        for a in (self, other):  # CuPy: every operand must be on the current device
            if a.device != _current:
                raise ValueError(f"Array device must be same as the current device: array "
                                 f"device = {a.device} while current = {_current} [simulated]")
        return FakeArray(self.data @ other.data, _current)

    def __repr__(self):
        return f"FakeArray(shape={self.data.shape}, device={self.device})"


def asarray(x):
    """``cupy.asarray``: a copy of ``x`` on the current device."""
    return FakeArray(np.array(x), _current)
