"""Hiding communication: allreduce gradient buckets while backward is still running (as DDP does).

    optimizer = create_multi_node_optimizer(Adam(), comm, overlap=True, bucket_bytes=1 << 20)
    optimizer.update(lossfun, *args)    # the loss-function path: the Trainer's way of calling it
    optimizer.overlap.events            # the last step: nodes run backward, buckets started, done

The machinery of ``OverlappedMultiNodeOptimizer`` (``optimizer.py``, beside the naive
``MultiNodeOptimizer``). ``BucketedMeanGrad``, a ``FunctionHook``, holds a list of ``Bucket``s:
each gathers the gradients of a few parameters and starts its own nonblocking allreduce as soon
as backward has completed all of them; ``finish`` waits for the rest and makes the mean
every ``param.grad``, as ``multi_node_mean_grad`` with ``zero_fill=True`` would.

Cost, for ``n`` gradient elements of itemsize ``s`` in ``k`` buckets, per step: the same
``n * s`` bytes as one allreduce, in ``k`` messages (``k`` latencies instead of one); a copy of
every gradient into its bucket (none back: each ``param.grad`` becomes its slice of a bucket,
divided there by the number of ranks); a walk of the graph, and a ``Test`` of every
bucket in flight after each function node. When the parameters change (the first step): one
``bcast_obj`` of the plan. The sum is MPI's ``Iallreduce`` on ``comm.mpi_comm``, whatever
allreduce ``comm`` was made with, or ``comm.iallreduce(buffer)`` where there is one
(``dlhack.parallel.slowlink``).

How it works, what it hides and what it cannot: lesson 9, "Hiding communication"
(lessons/09_overlap.ipynb).
"""
import math
import time

import chainer
import numpy as np
from mpi4py import MPI

# 1 MB: the translator's 2-8 MB of gradients make a few buckets. PyTorch's default is 25 MB,
# for GPU models of hundreds of MB; each bucket costs one latency more.
BUCKET_BYTES = 1 << 20


def iallreduce(comm, buffer):
    """Start summing ``buffer`` over ranks, in place; returns a request with ``Test``/``Wait``."""
    start = getattr(comm, "iallreduce", None)
    if start is not None:
        return start(buffer)
    return comm.mpi_comm.Iallreduce(MPI.IN_PLACE, buffer)


def consumers(loss, params):
    """``{name: [function nodes taking that parameter as input]}`` in the graph of ``loss``.

    Also moves every node whose inputs are all leaves to a rank just below its lowest
    consumer's (lesson 9, section 2), so that backward runs it as early as it may.
    """
    names = {param.node: name for name, param in params.items()}
    uses = {name: [] for name in params}
    lowest_use = {}  # node -> the lowest rank among the nodes that consume its outputs
    seen, stack = set(), [loss.creator_node]
    while stack:
        func = stack.pop()
        if func is None or func in seen:
            continue
        seen.add(func)
        for x in func.inputs:
            if x in names:
                if func not in uses[names[x]]:
                    uses[names[x]].append(func)
            elif x.creator_node is not None:
                creator = x.creator_node
                lowest_use[creator] = min(lowest_use.get(creator, math.inf), func.rank)
                stack.append(creator)
    for func, rank in lowest_use.items():
        if all(x.creator_node is None for x in func.inputs) and func.rank < rank - 0.5:
            # It must run after every consumer: any rank below theirs keeps backward's order
            # valid, and just below the lowest is the earliest.
            func.rank = rank - 0.5
    return uses


def plan_buckets(params, uses, bucket_bytes):
    """Parameter names in the order backward should finish with them, cut into buckets.

    A parameter is complete when its last consumer has run, the one of lowest rank. Unused
    parameters (zeros) come first. A bucket closes once it holds ``bucket_bytes`` or more.
    """
    def done_at(name):
        return min((func.rank for func in uses[name]), default=math.inf)

    buckets, size = [[]], 0
    for name in sorted(params, key=lambda name: (-done_at(name), name)):
        buckets[-1].append(name)
        size += params[name].array.nbytes
        if size >= bucket_bytes:
            buckets.append([])
            size = 0
    return [bucket for bucket in buckets if bucket]


class Bucket:
    """A few parameters whose gradients travel together: one buffer, one nonblocking allreduce.

    Args:
        names: the parameters, in the order their gradients sit in ``buffer``.
        params: ``{name: chainer.Parameter}``, initialised, holding at least ``names``.
        dtype: the buffer's dtype: the precision of the sum.

    ``views[name]`` is that parameter's slice of ``buffer``. ``reset`` starts a step with a new
    buffer (the last step's mean gradients are views of the old one, and stay as they are);
    ``uses_left[name]`` then counts the function nodes whose backward has yet to add their share
    of that gradient, and ``written`` holds the names whose slice holds a share already (the
    first share is copied in, the others added: the buffer is never zeroed first);
    ``request`` is the allreduce while it is in flight, ``None`` otherwise.
    """

    def __init__(self, names, params, dtype):
        self.names = list(names)
        self.sizes = [params[name].size for name in self.names]
        self.dtype = np.dtype(dtype)
        self.buffer = self.views = None
        self.uses_left, self.written, self.request = {}, set(), None
        self.reset({})

    def reset(self, uses):
        """A new step: a new buffer; ``len(uses[name])`` nodes will add to each gradient (none:
        its slice is zero)."""
        self.buffer = np.empty(sum(self.sizes), self.dtype)  # (sum of sizes,): the gradients
        ends = np.cumsum(self.sizes, dtype=np.int64)
        self.views = {name: self.buffer[end - size:end]
                      for name, size, end in zip(self.names, self.sizes, ends, strict=True)}
        self.uses_left = {name: len(uses.get(name, ())) for name in self.names}
        self.written, self.request = set(), None
        for name, left in self.uses_left.items():
            if not left:
                self.views[name].fill(0)

    def add(self, name, grad):
        """Add one node's share (an array of ``name``'s shape, on any device) to ``name``'s."""
        share = chainer.backend.CpuDevice().send(grad).reshape(-1)
        if name in self.written:
            self.views[name] += share
        else:
            self.views[name][...] = share
            self.written.add(name)

    def count_down(self, name):
        """One more node that takes ``name`` as input has run its backward."""
        self.uses_left[name] -= 1
        if not self.uses_left[name] and name not in self.written:  # no node gave it a share
            self.views[name].fill(0)

    @property
    def ready(self):
        """Every gradient in the bucket is complete: its allreduce may start."""
        return not any(self.uses_left.values())

    def start(self, comm):
        """Start summing ``buffer`` over ranks, in place."""
        self.request = iallreduce(comm, self.buffer)

    def test(self):
        """True when the sum has just been seen complete; each call moves MPI's progress along."""
        if self.request is not None and self.request.Test():
            self.request = None
            return True
        return False

    def wait(self):
        """Block until the sum is complete; True if it was still in flight."""
        if self.request is None:
            return False
        self.request.Wait()
        self.request = None
        return True


class BucketedMeanGrad(chainer.FunctionHook):
    """Averages gradients over ranks bucket by bucket while backward runs.

    Args:
        comm: our communicator or ChainerMN's (``rank``, ``size``, ``bcast_obj``, ``mpi_comm``).
        bucket_bytes: a bucket closes once it holds this many bytes of gradients.

    ``buckets`` are planned by rank 0 at the first step (again when the parameters change) and
    are the same on every rank; ``layout`` lists their names. After each step, ``events`` lists
    what happened in order: ``("backward", label)`` per function node, ``("start", i)`` when
    bucket ``i``'s allreduce started, ``("done", i)`` when it was seen complete;
    ``seconds_exposed`` adds up the time ``finish`` waited.
    """

    name = "BucketedMeanGrad"

    def __init__(self, comm, bucket_bytes=BUCKET_BYTES):
        self.comm, self.bucket_bytes = comm, bucket_bytes
        self.buckets = []
        self.events, self.seconds_exposed = [], 0.0
        self._key = None  # [(name, shape, dtype)] of the parameters the buckets were planned for
        self._bucket_of = {}  # name -> its Bucket
        self._params = {}  # name -> Parameter, this step
        self._wrapped = []  # function nodes whose backward is wrapped, this step
        self._next = 0  # the next bucket to start: they start in order on every rank

    @property
    def layout(self):
        """The parameter names of each bucket: the plan, the same on every rank."""
        return [bucket.names for bucket in self.buckets]

    def backward(self, target, loss, loss_scale=None):
        """``loss.backward()`` with the gradients of ``target`` averaged over ranks as it runs."""
        target.cleargrads()  # first: the last step's buckets go before new ones are made
        self.prepare(target, loss)
        try:
            with self:
                loss.backward(loss_scale=loss_scale)
        finally:
            self._unwrap()
        self.finish()

    def prepare(self, target, loss):
        """Count consumers, agree on the buckets, reset them, wrap the consumers' backward."""
        params = {name: p for name, p in sorted(target.namedparams()) if p.array is not None}
        uses = consumers(loss, params)
        key = [(name, p.shape, str(p.dtype)) for name, p in params.items()]
        if key != self._key:
            self._plan(params, uses)
            self._key = key
        self._params, self._next, self.events = params, 0, []
        for bucket in self.buckets:
            bucket.reset(uses)
        names_of = {}  # function node -> the parameters it takes as input
        for name, funcs in uses.items():
            for func in funcs:
                names_of.setdefault(func, []).append(name)
        for func, names in names_of.items():
            self._wrap(func, names)
        self._start_ready()  # a bucket of unused parameters is ready before backward starts

    def _plan(self, params, uses):
        """Rank 0 cuts the buckets; every rank builds the same ones from its plan."""
        plan = plan_buckets(params, uses, self.bucket_bytes) if self.comm.rank == 0 else None
        dtype = np.result_type(np.float32, *[p.dtype for p in params.values()])
        self.buckets = [Bucket(names, params, dtype) for names in self.comm.bcast_obj(plan)]
        self._bucket_of = {name: bucket for bucket in self.buckets for name in bucket.names}

    def _wrap(self, func, names):
        """Make ``func.backward`` add its share of each of ``names`` into its bucket, and count."""
        node_names = {self._params[name].node: name for name in names}
        slots = [(i, node_names[x]) for i, x in enumerate(func.inputs) if x in node_names]
        original = func.backward

        def backward(target_input_indexes, grad_outputs):
            gxs = original(target_input_indexes, grad_outputs)
            every_input = len(gxs) == len(func.inputs)  # Chainer allows both conventions
            for i, name in slots:
                if i not in target_input_indexes:
                    continue
                gx = gxs[i if every_input else target_input_indexes.index(i)]
                if gx is not None and gx.array is not None:
                    self._bucket_of[name].add(name, gx.array)
            for name in names:
                self._bucket_of[name].count_down(name)
            return gxs

        func.backward = backward  # an instance attribute: the class's method shows through later
        self._wrapped.append(func)

    def _unwrap(self):
        for func in self._wrapped:
            del func.backward
        self._wrapped = []

    def backward_postprocess(self, function, in_data, out_grad):
        self.events.append(("backward", function.label))
        self._start_ready()
        for i, bucket in enumerate(self.buckets[:self._next]):
            if bucket.test():  # also moves MPI's progress along
                self.events.append(("done", i))

    def _start_ready(self):
        """Start, in order, every bucket whose parameters are all complete."""
        while self._next < len(self.buckets) and self.buckets[self._next].ready:
            self._start(self._next)

    def _start(self, i):
        self.buckets[i].start(self.comm)
        self.events.append(("start", i))
        self._next += 1

    def finish(self):
        """Start the buckets left, wait for all, write ``mean over ranks`` into every grad."""
        start = time.perf_counter()
        while self._next < len(self.buckets):
            self._start(self._next)  # complete now, whatever the count says: backward is over
        for i, bucket in enumerate(self.buckets):
            if bucket.wait():
                self.events.append(("done", i))
        self.seconds_exposed += time.perf_counter() - start
        for bucket in self.buckets:
            bucket.buffer /= self.comm.size  # the sums become means, in place
        for name, param in self._params.items():
            mean = self._bucket_of[name].views[name].reshape(param.shape)
            # a host gradient is its slice of the bucket (no copy); a device one is sent back
            param.grad = param.device.send(mean.astype(param.dtype, copy=False))
