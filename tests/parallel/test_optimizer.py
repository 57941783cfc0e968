"""The multi-node optimizer keeps ranks identical and equals single-process big-batch training;
its naive and overlapped classes are siblings that stand in for the Chainer optimizer they wrap.

The overlapped path's own tests (buckets, events) are in ``test_overlap.py``.
"""
import copy
import tempfile

import chainer
import chainer.links as L
import numpy as np
import pytest

from dlhack.parallel import create_communicator, create_multi_node_optimizer
from dlhack.parallel.equivalence import (
    max_difference,
    parameters,
    train_data_parallel,
    train_single,
)
from dlhack.parallel.optimizer import MultiNodeOptimizer, OverlappedMultiNodeOptimizer
from dlhack.parallel.overlap import BucketedMeanGrad
from tests.parallel.tiny_mlp import make_mlp, mlp_examples, mlp_loss

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
    for name in ("naive", "ring", "mpi", "shm"):
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
    for algorithm in ("naive", "ring", "mpi", "shm"):
        comm = create_communicator(algorithm, mpi_comm=mpi_comm)
        for opt_name, make_optimizer in OPTIMIZERS.items():
            for lazy in (False, True):
                if algorithm not in ("ring", "shm") and (lazy or opt_name == "MomentumSGD"):
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


def one_rank_comm():
    from mpi4py import MPI

    return create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())


def test_naive_and_overlapped_are_sibling_classes_picked_by_the_factory():
    comm = one_rank_comm()
    naive = create_multi_node_optimizer(chainer.optimizers.SGD(), comm)
    fast = create_multi_node_optimizer(chainer.optimizers.SGD(), comm, overlap=True,
                                       bucket_bytes=128)
    assert type(naive) is MultiNodeOptimizer and type(fast) is OverlappedMultiNodeOptimizer
    assert not issubclass(MultiNodeOptimizer, OverlappedMultiNodeOptimizer)
    assert not issubclass(OverlappedMultiNodeOptimizer, MultiNodeOptimizer)
    assert MultiNodeOptimizer.__bases__ == OverlappedMultiNodeOptimizer.__bases__, "one base"
    assert isinstance(fast.overlap, BucketedMeanGrad) and fast.overlap.bucket_bytes == 128
    assert "overlap" not in vars(naive), "the naive class carries nothing of the fast one"
    assert create_multi_node_optimizer(chainer.optimizers.SGD(), comm, zero_fill=False).zero_fill \
        is False


@pytest.mark.parametrize("overlap", [False, True])
def test_the_wrapper_stands_in_for_the_chainer_optimizer(overlap):
    comm = one_rank_comm()
    actual = chainer.optimizers.Adam(alpha=0.01)
    model = make_mlp()
    optimizer = create_multi_node_optimizer(actual, comm, overlap=overlap).setup(model)
    optimizer.alpha = 0.5  # as a schedule would: it is the wrapped optimizer's
    optimizer.comm = comm  # the wrapper's own: stays the wrapper's
    copied = copy.copy(optimizer)  # reaches __getattr__ before __dict__ is filled

    assert actual.alpha == 0.5 and optimizer.alpha == 0.5 and "alpha" not in vars(optimizer)
    assert vars(optimizer)["comm"] is comm and not hasattr(actual, "comm")
    assert optimizer.target is model and copied.actual_optimizer is actual
    optimizer.update(mlp_loss, model, mlp_examples(4))
    assert actual.t == 1, "the first update takes a step (ChainerMN's does not)"


@pytest.mark.parametrize("overlap", [False, True])
def test_forward_runs_once_a_step_and_again_after_a_lazy_link_gets_weights(overlap):
    comm = one_rank_comm()
    for lazy, first_step in ((False, 1), (True, 2)):
        model = make_mlp(lazy=lazy)
        calls = []

        def counted_loss(model, examples, calls=calls):
            calls.append(model.l1.W.array is not None)  # did the forward pass see weights?
            return mlp_loss(model, examples)

        optimizer = create_multi_node_optimizer(chainer.optimizers.SGD(), comm, overlap=overlap)
        optimizer.setup(model)
        optimizer.update(counted_loss, model, mlp_examples(4))
        optimizer.update(counted_loss, model, mlp_examples(4, seed=1))
        assert calls == [not lazy] + [True] * first_step, f"lazy={lazy}: {calls}"


def classifier(seed=0):
    return L.Classifier(make_mlp(seed=seed, dtype=np.float64))


def train_with_trainer(make_optimizer, overlap, comm, examples, b, stop, state=None):
    """Chainer's Trainer and StandardUpdater on this rank's ``examples``, ``b`` per step, until
    iteration ``stop``, from ``state`` (a serialized trainer) if given; returns the model and the
    trainer's state."""
    model = classifier(seed=comm.rank)  # other weights on every rank: only the bcast helps
    optimizer = create_multi_node_optimizer(make_optimizer(), comm, overlap=overlap,
                                            bucket_bytes=256).setup(model)
    it = chainer.iterators.SerialIterator(examples, b, shuffle=False)
    updater = chainer.training.StandardUpdater(it, optimizer)
    with tempfile.TemporaryDirectory() as out:  # the Trainer wants one; nothing is written
        trainer = chainer.training.Trainer(updater, (stop, "iteration"), out=out)
        if state is not None:
            trainer.serialize(chainer.serializers.NpzDeserializer(state))
        trainer.run()
    saved = {}
    trainer.serialize(chainer.serializers.DictionarySerializer(saved))
    return model, saved


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=120)
def test_trainer_and_a_resumed_trainer_equal_single_process_big_batch(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    b, steps = 2, 6
    batches = [mlp_examples(b * size, seed=step, dtype=np.float64) for step in range(steps)]
    mine = [x for batch in batches for x in batch[rank * b:(rank + 1) * b]]
    comm = create_communicator("ring", mpi_comm=mpi_comm)

    def make_adam():
        return chainer.optimizers.Adam(alpha=0.01)

    def lossfun(model, examples):
        return model(*chainer.dataset.concat_examples(examples))

    single = train_single(classifier, make_adam, batches, lossfun)
    results = {}
    for overlap in (False, True):
        whole, _ = train_with_trainer(make_adam, overlap, comm, mine, b, steps)
        _, halfway = train_with_trainer(make_adam, overlap, comm, mine, b, steps // 2)
        resumed, _ = train_with_trainer(make_adam, overlap, comm, mine, b, steps, state=halfway)
        results[overlap] = (max_difference(parameters(whole), single),
                            max_difference(parameters(resumed), parameters(whole)),
                            int(halfway["updater/optimizer:main/t"]))
    moved = max_difference(single, parameters(classifier()))

    for overlap, (diff, resumed_diff, t) in results.items():
        assert diff < 1e-12, f"overlap={overlap}: the Trainer's run differs by {diff}"
        assert resumed_diff == 0.0, f"overlap={overlap}: resuming changed the run"
        assert t == steps // 2, f"overlap={overlap}: the snapshot's optimizer.t is {t}"
    assert moved > 1e-3, "training did not move the weights"
