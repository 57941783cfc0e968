"""Hiding communication: allreduce gradient buckets while backward is still running (as DDP does).

    optimizer = create_multi_node_optimizer(Adam(), comm, overlap=True, bucket_bytes=1 << 20)
    optimizer.update(lossfun, *args)    # the loss-function path: the Trainer's way of calling it

The naive path (``optimizer.py`` without ``overlap``) runs the whole backward pass, then one
blocking allreduce of every gradient: computation and communication take turns, and the
allreduce is paid in full at every step. Backward, though, finishes with the last layers first.
Here the gradients travel in *buckets* as soon as they are complete, so the last layers'
gradients are summed while the first layers' are still being computed (PyTorch's
``DistributedDataParallel`` does the same with its gradient buckets):

1. Before backward, ``prepare`` walks the graph from the loss and counts, for every parameter,
   the function nodes that take it as an input (in the fast LSTM a layer's gate weights go
   through one ``concat`` node each). Those nodes' ``backward`` is wrapped so that the
   parameter's share of the gradient is added into the parameter's place in its bucket.
2. The buckets are the parameters in the order backward should finish with them, cut every
   ``bucket_bytes``. Rank 0 plans them from its graph and broadcasts the plan once, so every
   rank packs the same parameters into the same buckets (MPI needs every rank to start the
   same collectives in the same order).
3. During backward, this ``FunctionHook``'s ``backward_postprocess`` counts down each
   parameter's consumers. When every parameter of a bucket is complete, and every bucket
   before it has started, the bucket's sum starts with a nonblocking ``Iallreduce``. MPICH
   moves a nonblocking collective forward only inside MPI calls (on every rank), so the hook
   also calls ``Test`` on the buckets in flight after every function node. A long node (a
   fast-LSTM layer) still stalls it; ``MPIR_CVAR_ASYNC_PROGRESS=1`` gives MPICH a progress
   thread, which needs a core to spare.
4. After backward, ``finish`` starts what is left, waits for every bucket, divides by ``size``
   and writes the mean into every ``param.grad``: the same result as ``multi_node_mean_grad``
   with ``zero_fill=True`` (a parameter unused on a rank adds zeros).

Chainer detail: backward runs function nodes from the highest ``rank`` (distance from the
inputs) down, and a node whose inputs are all leaves (``concat`` of parameters, ``EmbedID``) has
rank 0, so it would run at the very end however early its gradient is ready. ``prepare`` gives
each such node a rank just below its lowest consumer's, which is still a valid order, so that
the fast LSTM's weights are complete as soon as their layer's backward has run.

What it overlaps: the allreduce of every bucket but the last with the backward computation
that follows it. What it cannot: the last bucket (the first layers, the embeddings) starts when
backward ends, and the optimizer step needs every bucket. ChainerMN's ``double_buffering``
hides the rest by using the previous step's gradients (one step stale); this stays exact.

Cost, for ``n`` gradient elements of itemsize ``s`` in ``k`` buckets, per step: the same
``n * s`` bytes as one allreduce, in ``k`` messages (``k`` latencies instead of one); a copy of
every gradient into its bucket and one back (the naive path packs and unpacks too); a walk of
the graph and one ``Test`` per bucket in flight per function node. Once, or when the
parameters change: one ``bcast_obj`` of the plan. The sum is MPI's own (``Iallreduce`` on
``comm.mpi_comm``), whatever allreduce algorithm ``comm`` was made with; a communicator that
has an ``iallreduce(buffer)`` method (``dlhack.parallel.slowlink``) is used instead.

Lesson 9: "Hiding communication". The naive path is ``optimizer.py``.
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
    consumer's (see the module docstring), so that backward runs it as early as it may.
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


class BucketedMeanGrad(chainer.FunctionHook):
    """Averages gradients over ranks bucket by bucket while backward runs (see module doc).

    Args:
        comm: our communicator or ChainerMN's (``rank``, ``size``, ``bcast_obj``, ``mpi_comm``).
        bucket_bytes: a bucket closes once it holds this many bytes of gradients.

    After each step, ``events`` lists what happened in order: ``("backward", label)`` per
    function node, ``("start", i)`` when bucket ``i``'s allreduce started, ``("done", i)``
    when it was seen complete; ``seconds_exposed`` adds up the time ``finish`` waited.
    """

    name = "BucketedMeanGrad"

    def __init__(self, comm, bucket_bytes=BUCKET_BYTES):
        self.comm, self.bucket_bytes = comm, bucket_bytes
        self.layout, self._key = None, None  # buckets of names, the same on every rank
        self.events, self.seconds_exposed = [], 0.0
        self._pending, self._wrapped = {}, []

    def backward(self, target, loss, loss_scale=None):
        """``loss.backward()`` with the gradients of ``target`` averaged over ranks as it runs."""
        self.prepare(target, loss)
        target.cleargrads()
        try:
            with self:
                loss.backward(loss_scale=loss_scale)
        finally:
            self._unwrap()
        self.finish()

    def prepare(self, target, loss):
        """Count consumers, agree on the buckets, zero them, wrap the consumers' backward."""
        params = {name: p for name, p in sorted(target.namedparams()) if p.array is not None}
        uses = consumers(loss, params)
        key = [(name, p.shape, str(p.dtype)) for name, p in params.items()]
        if key != self._key:
            plan = plan_buckets(params, uses, self.bucket_bytes) if self.comm.rank == 0 else None
            self.layout, self._key = self.comm.bcast_obj(plan), key
            dtype = np.result_type(np.float32, *[p.dtype for p in params.values()])
            self._buffers = [np.empty(sum(params[n].size for n in b), dtype) for b in self.layout]
            self._views, self._bucket_of = {}, {}
            for i, (bucket, buffer) in enumerate(zip(self.layout, self._buffers)):
                offset = 0
                for name in bucket:
                    self._views[name] = buffer[offset:offset + params[name].size]
                    self._bucket_of[name] = i
                    offset += params[name].size
        for buffer in self._buffers:
            buffer.fill(0)
        self._params = params
        self._remaining = {name: len(uses[name]) for name in params}
        self._left = [sum(1 for name in bucket if self._remaining[name]) for bucket in self.layout]
        self._pending = {}
        for name, funcs in uses.items():
            for func in funcs:
                self._pending.setdefault(func, []).append(name)
        for func, names in self._pending.items():
            self._wrap(func, names)
        self._requests, self._next = [], 0
        self.events = []
        self._start_ready()  # a bucket of unused parameters is ready before backward starts

    def _wrap(self, func, names):
        """Make ``func.backward`` also add its gradients for ``names`` into their buckets."""
        slots = [(i, self._views[self._names_of(x, names)]) for i, x in enumerate(func.inputs)
                 if self._names_of(x, names) is not None]
        original = func.backward

        def backward(target_input_indexes, grad_outputs):
            gxs = original(target_input_indexes, grad_outputs)
            every_input = len(gxs) == len(func.inputs)  # Chainer allows both conventions
            for i, view in slots:
                if i not in target_input_indexes:
                    continue
                gx = gxs[i if every_input else target_input_indexes.index(i)]
                if gx is not None and gx.array is not None:
                    view += chainer.backend.CpuDevice().send(gx.array).reshape(-1)
            return gxs

        func.backward = backward  # an instance attribute: the class's method shows through later
        self._wrapped.append(func)

    def _names_of(self, node, names):
        for name in names:
            if self._params[name].node is node:
                return name
        return None

    def _unwrap(self):
        for func in self._wrapped:
            del func.backward
        self._wrapped = []

    def backward_postprocess(self, function, in_data, out_grad):
        self.events.append(("backward", function.label))
        for name in self._pending.pop(function, ()):
            self._remaining[name] -= 1
            if self._remaining[name] == 0:
                self._left[self._bucket_of[name]] -= 1
        self._start_ready()
        for i, request in self._requests:
            if request is not None and request.Test():  # also moves MPI's progress along
                self._requests[i] = (i, None)
                self.events.append(("done", i))

    def _start_ready(self):
        """Start, in order, every bucket whose parameters are all complete."""
        while self._next < len(self.layout) and self._left[self._next] == 0:
            self._start(self._next)

    def _start(self, i):
        self._requests.append((i, iallreduce(self.comm, self._buffers[i])))
        self.events.append(("start", i))
        self._next += 1

    def finish(self):
        """Start the buckets left, wait for all, write ``mean over ranks`` into every grad."""
        start = time.perf_counter()
        while self._next < len(self.layout):
            self._start(self._next)  # complete now, whatever the count says: backward is over
        for i, request in self._requests:
            if request is not None:
                request.Wait()
                self.events.append(("done", i))
        self.seconds_exposed += time.perf_counter() - start
        size = self.comm.size
        for name, param in self._params.items():
            mean = self._views[name].reshape(param.shape) / size
            param.grad = param.device.send(mean.astype(param.dtype, copy=False))
        self._requests = []
