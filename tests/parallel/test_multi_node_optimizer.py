"""The multi-node optimizer keeps ranks identical and equals single-process big-batch training."""
import chainer
import numpy as np
import pytest
from tiny_mlp import make_mlp, mlp_examples, mlp_loss

from dlhack.parallel import create_communicator, create_multi_node_optimizer
from dlhack.parallel.equivalence import (
    max_difference,
    parameters,
    train_data_parallel,
    train_single,
)

OPTIMIZERS = {
    "SGD": lambda: chainer.optimizers.SGD(lr=0.1),
    "MomentumSGD": lambda: chainer.optimizers.MomentumSGD(lr=0.05),
    "Adam": lambda: chainer.optimizers.Adam(alpha=0.01),
}


def param_bytes(model):
    return b"".join(param.tobytes() for param in parameters(model).values())


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=60)
def test_bcast_data_and_ranks_stay_bit_identical(mpi_comm):
    rank = mpi_comm.rank
    root_bytes = param_bytes(make_mlp(seed=0))
    checks = {}
    for name in ("naive", "ring", "mpi"):
        comm = create_communicator(name, mpi_comm=mpi_comm)
        model = make_mlp(seed=rank)  # different weights on every rank
        comm.bcast_data(model)
        checks[f"{name} bcast_data"] = mpi_comm.allgather(param_bytes(model))

        for manual in (False, True):
            model = make_mlp(seed=0 if manual else rank)
            optimizer = create_multi_node_optimizer(chainer.optimizers.Adam(), comm).setup(model)
            for step in range(4):  # each rank its own data
                examples = mlp_examples(5, seed=100 * step + rank)
                if manual:  # the other calling convention: backward, then update()
                    loss = mlp_loss(model, examples)
                    model.cleargrads()
                    loss.backward()
                    optimizer.update()
                else:
                    optimizer.update(mlp_loss, model, examples)
            checks[f"{name} manual={manual}"] = mpi_comm.allgather(param_bytes(model))
            # the unused link got zero gradients (zero_fill), so Adam leaves it alone.
            checks[f"{name} manual={manual} unused"] = [
                np.array_equal(model.unused.W.array, make_mlp(seed=0).unused.W.array)]

    for case, values in checks.items():
        if case.endswith("unused"):
            assert values == [True], case
        else:
            assert len(set(values)) == 1, f"{case}: ranks differ"
    assert checks["ring bcast_data"][0] == root_bytes
    assert checks["ring manual=False"][0] != root_bytes  # training moved the weights


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=90)
def test_data_parallel_equals_single_process_big_batch(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    f64 = np.float64  # double precision: the only difference left is the order of additions
    batches = [mlp_examples(3 * size, seed=step, dtype=f64) for step in range(4)]
    results = {}
    for algorithm in ("naive", "ring", "mpi"):
        comm = create_communicator(algorithm, mpi_comm=mpi_comm)
        for opt_name, make_optimizer in OPTIMIZERS.items():
            for lazy in (False, True):
                if algorithm != "ring" and (lazy or opt_name == "MomentumSGD"):
                    continue  # the algorithms are tested elsewhere; one pass each is enough

                def reference(lazy=lazy):
                    return make_mlp(seed=0, dtype=f64, lazy=lazy)

                # Rank r > 0 starts from other weights (a different seed, or perturbed), so
                # only the optimizer's first broadcast can bring it to the reference.
                if lazy:
                    parallel = train_data_parallel(
                        lambda: make_mlp(seed=rank, dtype=f64, lazy=True), make_optimizer,
                        batches, mlp_loss, comm)
                else:
                    parallel = train_data_parallel(
                        reference, make_optimizer, batches, mlp_loss, comm, perturb=0.1)
                single = train_single(reference, make_optimizer, batches, mlp_loss)
                # Negative control: each rank on its own slice, no averaging.
                b = 3
                alone = train_single(reference, make_optimizer,
                                     [x[rank * b:(rank + 1) * b] for x in batches], mlp_loss)
                initial = parameters(reference())["/l2/W"]  # (l1/W may not exist yet)
                results[f"{algorithm} {opt_name} lazy={lazy}"] = (
                    max_difference(parallel, single), max_difference(alone, single),
                    np.max(np.abs(single["/l2/W"] - initial)))

    for case, (diff, alone_diff, moved) in results.items():
        assert diff < 1e-12, f"{case}: data-parallel differs from single process by {diff}"
        assert moved > 1e-3, f"{case}: training did not move the weights"
        if size > 1:
            assert alone_diff > 1e-6, f"{case}: the check cannot tell averaging from none"
