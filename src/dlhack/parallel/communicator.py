"""The communicator: who am I, who shares my node, and how do we sum gradients.

    comm = create_communicator("ring")             # ours: "naive", "ring", "mpi" or "shm"
    comm = create_communicator("chainermn:naive")  # ChainerMN's own, behind the same flag

Ours implements the part of ChainerMN's ``CommunicatorBase`` that ChainerMN's helpers call
(``create_multi_node_optimizer``, ``scatter_dataset``, ``create_multi_node_evaluator``):
``rank``, ``size``, ``intra_rank``, ``intra_size``, ``inter_rank``, ``inter_size``,
``bcast_data``, ``multi_node_mean_grad``, ``bcast_obj``, ``gather_obj``, ``allreduce_obj``,
``send_obj`` and ``recv_obj``. Our own helpers use only these, so either communicator works
with either set of helpers.

Device (CuPy) arrays are staged through host memory: ``multi_node_mean_grad`` packs the
gradients into one host buffer, sums it, and copies the result back to the device. A
CUDA-aware MPI can read device memory directly: with ``cuda_aware=True``, ``allreduce`` hands
device arrays straight to the ``"mpi"`` algorithm (MPI does the adding). ``"naive"`` and
``"ring"`` add with numpy, so they always stage. The mpich wheel this course installs from
PyPI is not CUDA-aware, and no test here runs on a GPU.

Cost: creating one is one ``allgather`` of host names (``hosts``). ``multi_node_mean_grad`` is
one allreduce of all ``n`` gradients packed together, whatever their number of arrays (its
messages and bytes are the algorithm's: see each ``allreduce_*`` module); ``bcast_data`` is one
``Bcast`` per parameter array; the ``*_obj`` methods send one pickle each, for small objects.

Its fast sibling, ``SharedMemoryCommunicator`` (``"shm"``, ``dlhack train``'s default), adds
the gradients of ranks on one node in memory they share, with no messages (``shared_memory``).

Lesson: "The communicator". The three algorithms live in ``allreduce_naive``,
``allreduce_ring`` and ``allreduce_mpi``.
"""
import chainer
import numpy as np
from mpi4py import MPI

from dlhack.parallel import allreduce_mpi, allreduce_naive, allreduce_ring, shared_memory
from dlhack.parallel.hosts import host_ranks

ALGORITHMS = {
    "naive": allreduce_naive.allreduce,
    "ring": allreduce_ring.allreduce,
    "mpi": allreduce_mpi.allreduce,
}
CHAINERMN_NAMES = ("chainermn:naive", "chainermn:flat", "chainermn:pure_nccl")
NAMES = (*ALGORITHMS, "shm", *CHAINERMN_NAMES)


def create_communicator(name="ring", mpi_comm=None, hostname=None, cuda_aware=False):
    """Create our communicator, or ChainerMN's when ``name`` starts with ``"chainermn:"``.

    Args:
        name: ``"naive"``, ``"ring"``, ``"mpi"``, ``"shm"`` (ours; ``"shm"``: the ring's,
            adding in shared memory on one node) or ``"chainermn:naive"``,
            ``"chainermn:flat"``, ``"chainermn:pure_nccl"`` (ChainerMN's; the last two need GPUs).
        mpi_comm: the ``mpi4py`` communicator to run on. Default: a duplicate of
            ``MPI.COMM_WORLD``, so our messages never mix with anyone else's.
        hostname: pretend this rank runs on this host (tests); ours only.
        cuda_aware: pass device arrays to MPI directly (``"mpi"`` only); ours only.
    """
    if mpi_comm is None:
        mpi_comm = MPI.COMM_WORLD.Dup()
    if name in CHAINERMN_NAMES:
        import chainermn  # imported only when asked for

        return chainermn.create_communicator(name.split(":", 1)[1], mpi_comm=mpi_comm)
    if name == "shm":
        return SharedMemoryCommunicator(mpi_comm, hostname=hostname)
    if name not in ALGORITHMS:
        raise ValueError(f"unknown communicator {name!r}; choose from {', '.join(NAMES)}")
    return Communicator(mpi_comm, name, hostname=hostname, cuda_aware=cuda_aware)


def _as_bytes(array):
    """A flat ``uint8`` view of a C-contiguous host array (MPI moves bytes, whatever the dtype)."""
    if not array.flags.c_contiguous:
        raise ValueError("MPI buffers must be C-contiguous")
    return array.reshape(-1).view(np.uint8)


def gradients(model, zero_fill=False):
    """``model``'s parameters whose gradients are averaged, in name order (the same on every
    rank); with ``zero_fill``, a parameter without a gradient first gets a zero one."""
    return zero_filled([param for _, param in sorted(model.namedparams())
                        if param.array is not None and (zero_fill or param.grad is not None)])


def zero_filled(params):
    """``params``, each that has no gradient given a zero one."""
    for param in params:
        if param.grad is None:
            param.grad = param.xp.zeros_like(param.array)
    return params


def pieces_of(buffer, params):
    """Consecutive views of the flat ``buffer``, one shaped like each parameter of ``params``
    (and so like its gradient)."""
    pieces, offset = [], 0
    for param in params:
        pieces.append(buffer[offset:offset + param.size].reshape(param.shape))
        offset += param.size
    return pieces


def pack(params, buffer, size, pieces=None):
    """Copy every gradient of ``params``, divided by ``size``, end to end into the flat host
    ``buffer`` (device gradients come to the host on the way); returns each one's piece.
    ``pieces``: ``pieces_of(buffer, params)``, found once by a caller that packs every step."""
    pieces = pieces_of(buffer, params) if pieces is None else pieces
    for param, piece in zip(params, pieces, strict=True):
        grad = param.grad
        host = grad if isinstance(grad, np.ndarray) else chainer.backend.CpuDevice().send(grad)
        np.divide(host, size, out=piece)
    return pieces


def unpack(params, pieces):
    """Each gradient becomes its piece (the mean, where it already lies) when it is a host array
    of the piece's dtype; otherwise the piece is copied into it (to the device)."""
    for param, piece in zip(params, pieces, strict=True):
        if isinstance(param.grad, np.ndarray) and param.grad.dtype == piece.dtype:
            param.grad = piece
        else:
            param.grad[...] = param.device.send(piece.astype(param.grad.dtype, copy=False))


class Communicator:
    """Ranks, host layout and collectives over one ``mpi4py`` communicator.

    Args:
        mpi_comm: the ``mpi4py.MPI.Comm`` to use (every rank passes its own handle to it).
        algorithm: ``"naive"``, ``"ring"`` or ``"mpi"``: which allreduce sums the gradients.
        hostname: pretend this rank runs on this host (see ``dlhack.parallel.hosts``).
        cuda_aware: pass device arrays straight to MPI with ``"mpi"``; stage them otherwise.
    """

    def __init__(self, mpi_comm, algorithm="ring", hostname=None, cuda_aware=False):
        self.mpi_comm = mpi_comm
        self.name = algorithm
        self.cuda_aware = cuda_aware and algorithm == "mpi"
        self._allreduce = ALGORITHMS[algorithm]
        self.intra_rank, self.intra_size, self.inter_rank, self.inter_size = host_ranks(
            mpi_comm, hostname)

    def __repr__(self):
        return f"Communicator({self.name!r}, rank={self.rank}, size={self.size})"

    @property
    def rank(self):
        """This process's rank in ``mpi_comm``."""
        return self.mpi_comm.rank

    @property
    def size(self):
        """The number of ranks."""
        return self.mpi_comm.size

    # Arrays -----------------------------------------------------------------------------

    def allreduce(self, array, out=None):
        """Sum a numpy or CuPy array over ranks with this communicator's algorithm.

        Args:
            array: the same shape and dtype on every rank.
            out: where to write the sum (``out=array``: in place). Default: a new array.
        """
        xp = chainer.backend.get_array_module(array)
        if xp is np or self.cuda_aware:
            if xp is not np:
                xp.cuda.get_current_stream().synchronize()  # MPI reads what the GPU wrote
            return self._allreduce(self.mpi_comm, array, out=out)
        host = chainer.backend.CpuDevice().send(array)  # device -> host copy
        self._allreduce(self.mpi_comm, host, out=host)
        if out is None:
            return xp.asarray(host)
        out[...] = xp.asarray(host)
        return out

    def bcast_data(self, model, root=0):
        """Overwrite every rank's parameters with the root's (one ``Bcast`` per parameter).

        It runs once, before training, so the latency of one message per parameter is fine.
        """
        for _, param in sorted(model.namedparams()):
            if param.array is None:  # a lazily initialised link that has not run yet
                continue
            host = chainer.backend.CpuDevice().send(param.array)  # the array itself on CPU
            self.mpi_comm.Bcast(_as_bytes(host), root=root)
            if host is not param.array:
                param.array[...] = param.device.send(host)

    def multi_node_mean_grad(self, model, zero_fill=False):
        """Replace every gradient with its mean over ranks, in one allreduce.

        All gradients are packed into one flat buffer, each divided by ``size`` on the way,
        and summed with a single allreduce. One big message pays the latency alpha once; one
        message per parameter array would pay it once per array (a seq2seq model has dozens).
        Host gradients then simply become their pieces of that buffer (no copy back: a new
        buffer each call, which Chainer's next ``cleargrads`` lets go); device gradients are
        copied back to the device. With one rank nothing is packed or sent: each gradient is
        already the mean (a lone process pays no copy for the data-parallel code path).

        Args:
            model: a ``chainer.Link``; every rank must have the same parameters with gradients.
            zero_fill: give parameters without a gradient (unused in this step) a zero one and
                include them, so every rank sends the same layout; otherwise skip them.
        """
        params = gradients(model, zero_fill)
        if params and self.size > 1:  # one rank: every gradient is already its own mean
            self._average(params)

    def _average(self, params):
        """Each gradient of ``params`` (in the same order on every rank) becomes its mean."""
        dtype = np.result_type(*[param.grad.dtype for param in params])
        buffer = np.empty(sum(param.grad.size for param in params), dtype)  # every gradient,
        pieces = pack(params, buffer, self.size)                            # end to end
        self._allreduce(self.mpi_comm, buffer, out=buffer)  # the sum of the shares: the mean
        unpack(params, pieces)

    def allreduce_grad(self, model, zero_fill=False):
        """ChainerMN's older name for ``multi_node_mean_grad``."""
        self.multi_node_mean_grad(model, zero_fill)

    # Python objects (pickled: fine for small objects, never on the hot path) --------------

    def bcast_obj(self, obj, max_buf_len=None, root=0):
        """The root's ``obj`` on every rank (``max_buf_len``: accepted for ChainerMN's sake and
        ignored; ChainerMN cuts pickles above it into pieces, we send one message)."""
        return self.mpi_comm.bcast(obj, root=root)

    def gather_obj(self, obj, root=0):
        """A list of every rank's ``obj`` (in rank order) on the root, ``None`` elsewhere."""
        return self.mpi_comm.gather(obj, root=root)

    def allreduce_obj(self, obj):
        """The sum (``+``) of every rank's ``obj``, on every rank."""
        return self.mpi_comm.allreduce(obj)

    def send_obj(self, obj, dest, tag=0):
        """Send ``obj`` to rank ``dest``."""
        self.mpi_comm.send(obj, dest=dest, tag=tag)

    def recv_obj(self, source, status=None, tag=MPI.ANY_TAG):
        """Receive an object sent with ``send_obj`` from rank ``source``."""
        return self.mpi_comm.recv(source=source, tag=tag, status=status)


class SharedMemoryCommunicator(Communicator):
    """``Communicator`` whose ``multi_node_mean_grad`` adds in memory the ranks of one node
    share (``shared_memory``: no messages); the ring's where they do not.

    Args:
        mpi_comm: the ``mpi4py.MPI.Comm`` to use.
        hostname: pretend this rank runs on this host (see ``dlhack.parallel.hosts``).
    """

    def __init__(self, mpi_comm, hostname=None):
        super().__init__(mpi_comm, "ring", hostname=hostname)
        self.name = "shm"
        # Collective, once: can every rank map every other rank's memory?
        node = mpi_comm.Split_type(MPI.COMM_TYPE_SHARED)
        self.shares_memory = node.size == mpi_comm.size and self.inter_size == 1
        node.Free()
        self._windows = {}  # (n, dtype): shared_memory.SharedWindows, one per layout seen

    def _average(self, params):
        """Each gradient becomes its mean, added in shared memory (the steps are in
        ``shared_memory``'s docstring): views of one shared buffer, valid until the next call.
        The ring's way with ranks on several nodes, or gradients on a device or of mixed
        dtypes."""
        dtype = np.result_type(*[param.grad.dtype for param in params])
        host = all(isinstance(p.grad, np.ndarray) and p.grad.dtype == dtype for p in params)
        if not self.shares_memory or not host:
            return super()._average(params)
        n = sum(param.grad.size for param in params)
        shared = shared_memory.windows_for(self._windows, self.mpi_comm, n, dtype)
        pack(params, shared.slots[self.rank], self.size)  # 1. my share, in my slot
        shared_memory.sum_slots(self.mpi_comm, shared)    # 2-4. the sum, in shared.mean
        unpack(params, pieces_of(shared.mean, params))    # 5. views of the mean
