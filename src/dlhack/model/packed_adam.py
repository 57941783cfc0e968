"""Adam over one packed parameter buffer: the fast sibling of ``chainer.optimizers.Adam``.

    optimizer = PackedAdam(alpha=2e-3)
    optimizer.setup(model)               # the model's parameters become views of one buffer
    optimizer.update(lossfun, *args)     # or loss.backward(); optimizer.update()

Chainer's Adam updates each parameter array on its own: for the translator, about a hundred
arrays, each through the update-rule machinery (hooks, state checks, dtype casts) and half a
dozen full-size temporaries. Here ``setup`` copies every parameter into one float buffer and
makes each ``param.array`` a view of it, with Adam's ``m`` and ``v`` as two more such buffers
(each rule's ``state`` holds views of them, so snapshots save and restore them as usual).
``update`` then runs the same arithmetic as Chainer's CPU Adam (the same operations in the same
order, so the same numbers) in place, in cache-sized chunks, each gradient read where Chainer's
backward left it (a gradient buffer of its own would cost a copy per step and memory of the
model's size).

Costs: no temporaries beyond two chunks (the second adds the sharded update's slots); about a
dozen passes over chunks that stay in cache.
Where ``dlhack.model.ckernels`` builds its C (float32 on a CPU), one pass over each parameter
instead, the same operations rounded differently (float tolerance, not the same bits), about
2.5 times faster; ``DLHACK_KERNELS=numpy`` keeps the numpy passes.
Only plain Adam (no AMSGrad, AdaBound or weight decay).
Lesson: "The multi-node optimizer" shows Chainer's per-parameter update rules.
"""
import ctypes

import chainer
import numpy as np
from chainer import backend

from dlhack.model.ckernels import address, kernels_for

CHUNK = 32768  # elements per pass: five float32 chunks (param, grad, m, v, scratch) fit in L2


class PackedAdam(chainer.optimizers.Adam):
    """``chainer.optimizers.Adam`` with one update over packed buffers (same arguments)."""

    def setup(self, link):
        super().setup(link)
        hp = self.hyperparam
        if hp.amsgrad or hp.adabound or hp.weight_decay_rate:
            raise ValueError("PackedAdam is plain Adam: no amsgrad, adabound or weight decay")
        self._params = [p for _, p in sorted(link.namedparams()) if p.array is not None]
        if len({p.dtype for p in self._params}) > 1:
            raise ValueError("PackedAdam packs parameters of one dtype only")
        xp = backend.get_array_module(self._params[0].array)
        sizes = [p.size for p in self._params]
        self._bounds = np.concatenate([[0], np.cumsum(sizes)])
        n, dtype = int(self._bounds[-1]), self._params[0].dtype
        self._scratch, self._sum = (xp.empty(min(n, CHUNK), dtype) for _ in range(2))
        self.place(xp.empty(n, dtype), xp.zeros(n, dtype), xp.zeros(n, dtype))
        return self

    def place(self, data, m, v, copy=True):
        """Make the flat ``data``, ``m`` and ``v`` (each as long as all the parameters) the
        buffers: every ``param.array``, and its rule's ``m`` and ``v``, becomes a view of them;
        with ``copy``, the parameters' values are copied in first (``dlhack.parallel.sharded``
        places them in memory the ranks of a node share, and copies on one rank only)."""
        self._data, self._m, self._v = data, m, v
        # where the buffers begin (elementwise.c's pointers), for one pass over any range
        self._bases = None if not isinstance(data, np.ndarray) else [
            address(a) for a in (data, m, v)]
        self._views = []
        for p, begin, end in zip(self._params, self._bounds[:-1], self._bounds[1:]):
            view = data[begin:end].reshape(p.shape)
            if copy:
                view[...] = p.array
            p.array = view
            self._views.append(view)
            p.update_rule._state = {"m": m[begin:end].reshape(p.shape),
                                    "v": v[begin:end].reshape(p.shape)}

    def _repack(self):
        """Bring back into the buffer any parameter whose array was replaced (a broadcast, a
        snapshot load)."""
        for p, view in zip(self._params, self._views):
            if p.array is not view:
                view[...] = p.array
                p.array = view

    def update(self, lossfun=None, *args, **kwds):
        """One Adam step for every parameter (``lossfun`` as in Chainer's optimizers)."""
        if lossfun is not None:
            # Cleared before the forward, not after it as Chainer's optimizers do: the last
            # step's gradients and this step's activations are never in memory together.
            self.target.cleargrads()
            loss = lossfun(*args, **kwds)
            loss.backward(loss_scale=self._loss_scale)
            del loss
        self.call_hooks("pre")
        self.t += 1
        self._repack()
        lib, step = kernels_for(self._data), self.step_constants()
        for p, begin, end in zip(self._params, self._bounds[:-1], self._bounds[1:]):
            p.update_rule.t = self.t
            if p.grad is None:
                continue  # as Chainer's rules do: no gradient, no step
            self.update_range(int(begin), int(end), p.grad.ravel(), lib, step)
        self.call_hooks("post")

    def step_constants(self):
        """``(1 - beta1, 1 - beta2, eta * alpha_t, eps)``: what a step at ``self.t`` needs."""
        hp = self.hyperparam
        return 1.0 - hp.beta1, 1.0 - hp.beta2, hp.eta * self.alpha_t, hp.eps

    def update_range(self, begin, end, grad, lib, step):
        """Adam's step on elements ``[begin, end)`` of the buffers, ``grad`` (flat) their
        gradient: one pass of ``lib`` (``kernels_for``; ``step``: ``step_constants()``), or
        numpy's passes over chunks where ``lib`` is None."""
        if lib is not None:  # one pass over the range
            grad = np.ascontiguousarray(grad)
            at = [base + begin * self._data.itemsize for base in self._bases]
            lib.adam_update(end - begin, at[0], address(grad), at[1], at[2], *step)
            return
        for s in range(0, end - begin, CHUNK):
            self._step(slice(begin + s, min(begin + s + CHUNK, end)), grad[s:s + CHUNK])

    def update_range_sum(self, begin, end, slots, lib, step):
        """``update_range`` on ``[begin, end)``, its gradient the sum of ``slots`` there (flat
        arrays as long as the buffer, added in their order): the sharded update's chunk
        (``dlhack.parallel.sharded``). In C one pass, the sum a block at a time in cache; in
        numpy the slots are added a chunk at a time into a buffer of its own."""
        if lib is not None:
            at = [base + begin * self._data.itemsize for base in self._bases]
            pointers = (ctypes.c_void_p * len(slots))(*map(address, slots))
            lib.adam_update_sum(end - begin, len(slots), pointers, begin, *at, *step)
            return
        for start in range(begin, end, CHUNK):
            stop = min(start + CHUNK, end)
            g = self._sum[:stop - start]
            np.copyto(g, slots[0][start:stop])
            for slot in slots[1:]:
                g += slot[start:stop]
            self._step(slice(start, stop), g)

    def _step(self, chunk, g):
        """Adam's arithmetic on one chunk of the buffers, in place (Chainer's order of ops)."""
        hp = self.hyperparam
        xp = backend.get_array_module(g)
        p, m, v = self._data[chunk], self._m[chunk], self._v[chunk]
        s = self._scratch[:len(p)]
        xp.subtract(g, m, out=s)           # m += (1 - beta1) * (grad - m)
        s *= 1.0 - hp.beta1
        m += s
        xp.multiply(g, g, out=s)           # v += (1 - beta2) * (grad * grad - v)
        s -= v
        s *= 1.0 - hp.beta2
        v += s
        xp.sqrt(v, out=s)                  # param -= eta * alpha_t / (sqrt(v) + eps) * m
        s += hp.eps
        xp.divide(self.alpha_t, s, out=s)
        s *= m
        if hp.eta != 1.0:
            s *= hp.eta
        p -= s
