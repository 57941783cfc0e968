"""The check behind data parallelism: N ranks with batch b == one process with batch N * b.

    parallel, single = train_both(make_model, make_optimizer, batches, lossfun, comm)
    assert all(np.allclose(parallel[k], single[k]) for k in single)

Every rank trains two models from the same ``make_model()`` weights:

- data-parallel: for each global batch, rank ``r`` takes the ``r``-th of ``size`` equal slices
  and steps with the multi-node optimizer (gradients averaged over ranks);
- single-process reference: the same rank steps with the whole global batch.

If ``lossfun`` is a mean over the batch's examples and every slice has the same size, the
averaged gradient is exactly the big-batch gradient, so the two end up equal up to rounding.
With a loss averaged over tokens (a translator), equal token counts per slice are needed too.

Used by the tests (``tests/parallel``) and the grader; lesson 5 quotes this docstring, and
lesson 9 ("Hiding communication") runs the check live.
"""
import chainer
import numpy as np

from dlhack.parallel.optimizer import create_multi_node_optimizer


def parameters(model):
    """``{name: host copy of the array}`` for every initialised parameter of ``model``."""
    return {name: np.array(chainer.backend.CpuDevice().send(param.array))
            for name, param in sorted(model.namedparams()) if param.array is not None}


def train_data_parallel(make_model, make_optimizer, batches, lossfun, comm, perturb=0.0):
    """Train ``make_model()`` on this rank's slice of each global batch; return its parameters.

    Args:
        make_model: returns a fresh model, with the same weights on every call and rank.
        make_optimizer: returns a fresh Chainer optimizer (e.g. ``lambda: optimizers.Adam()``).
        batches: global batches: lists of examples, each of a length divisible by ``size``.
        lossfun: ``lossfun(model, examples) -> loss``, the mean over ``examples``.
        comm: our communicator or ChainerMN's.
        perturb: add ``perturb * rank`` to every weight before training, so that only the
            multi-node optimizer's first broadcast can make the ranks agree.
    """
    model = make_model()
    for param in model.params():
        if param.array is not None:
            param.array[...] += perturb * comm.rank
    optimizer = create_multi_node_optimizer(make_optimizer(), comm).setup(model)
    for examples in batches:
        if len(examples) % comm.size:
            raise ValueError(f"a global batch of {len(examples)} does not split into "
                             f"{comm.size} equal slices")
        b = len(examples) // comm.size
        optimizer.update(lossfun, model, examples[comm.rank * b:(comm.rank + 1) * b])
    return parameters(model)


def train_single(make_model, make_optimizer, batches, lossfun):
    """The reference: train ``make_model()`` on each whole global batch in one process."""
    model = make_model()
    optimizer = make_optimizer()
    optimizer.setup(model)
    for examples in batches:
        optimizer.update(lossfun, model, examples)
    return parameters(model)


def train_both(make_model, make_optimizer, batches, lossfun, comm, perturb=0.0):
    """``(data-parallel parameters, single-process parameters)``, both on every rank."""
    parallel = train_data_parallel(make_model, make_optimizer, batches, lossfun, comm, perturb)
    return parallel, train_single(make_model, make_optimizer, batches, lossfun)


def max_difference(a, b):
    """Largest absolute difference between two ``{name: array}`` dicts with the same names."""
    if sorted(a) != sorted(b):
        raise ValueError(f"different parameters: {sorted(a)} vs {sorted(b)}")
    return max((float(np.max(np.abs(a[k] - b[k]), initial=0.0)) for k in a), default=0.0)
