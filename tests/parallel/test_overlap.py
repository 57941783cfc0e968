"""The overlapped multi-node optimizer (``overlap=True``) still equals single-process training,
starts its buckets before backward ends, and reduces every gradient exactly once.

The serial reference is ``dlhack.parallel.equivalence``'s; its ``train_data_parallel`` wraps the
optimizer with ``create_multi_node_optimizer(optimizer, comm)``, so the tests hand it a version
that passes ``overlap=True``.
"""
import functools

import chainer
import numpy as np
import pytest

from dlhack.parallel import create_communicator, create_multi_node_optimizer, equivalence
from dlhack.parallel.equivalence import max_difference, parameters, train_both
from dlhack.parallel.overlap import Bucket
from tests.parallel.test_translator_equivalence import global_batches, make_model, translator_loss
from tests.parallel.tiny_mlp import make_mlp, mlp_examples, mlp_loss

BUCKETS = {"one bucket": 1 << 30, "a bucket per parameter": 1}


def overlapped(monkeypatch, bucket_bytes):
    """Make ``equivalence.train_data_parallel`` wrap its optimizer with ``overlap=True``."""
    monkeypatch.setattr(equivalence, "create_multi_node_optimizer", functools.partial(
        create_multi_node_optimizer, overlap=True, bucket_bytes=bucket_bytes))


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=120)
def test_mlp_overlapped_equals_single_process_big_batch(mpi_comm, monkeypatch):
    rank, size = mpi_comm.rank, mpi_comm.size
    f64 = np.float64
    batches = [mlp_examples(3 * size, seed=step, dtype=f64) for step in range(4)]
    results = {}
    for algorithm in ("ring", "chainermn:naive"):
        comm = create_communicator(algorithm, mpi_comm=mpi_comm)
        for label, bucket_bytes in BUCKETS.items():
            overlapped(monkeypatch, bucket_bytes)
            for lazy in (False, True):
                def reference(lazy=lazy):
                    return make_mlp(seed=0, dtype=f64, lazy=lazy)

                def start(lazy=lazy):  # other weights on every rank: only the bcast helps
                    return make_mlp(seed=rank, dtype=f64, lazy=lazy)

                adam = functools.partial(chainer.optimizers.Adam, alpha=0.01)
                parallel = equivalence.train_data_parallel(
                    start if lazy else reference, adam, batches, mlp_loss, comm,
                    perturb=0.0 if lazy else 0.1)
                single = equivalence.train_single(reference, adam, batches, mlp_loss)
                initial = parameters(reference())["/l2/W"]  # (l1/W may not exist yet)
                results[f"{algorithm} {label} lazy={lazy}"] = (
                    max_difference(parallel, single),
                    np.max(np.abs(single["/l2/W"] - initial)),
                    mpi_comm.allgather(parallel["/l2/W"].tobytes()))
    for case, (diff, moved, every_rank) in results.items():
        assert diff < 1e-12, f"{case}: overlapped data-parallel differs by {diff}"
        assert moved > 1e-3, f"{case}: training did not move the weights"
        assert len(set(every_rank)) == 1, f"{case}: ranks differ"


@pytest.mark.mpi(ranks=[1, 2, 3, 4], timeout=180)
@pytest.mark.parametrize("bucket_bytes", [1 << 30, 4096])
def test_translator_overlapped_equals_single_process(mpi_comm, monkeypatch, bucket_bytes):
    comm = create_communicator("ring", mpi_comm=mpi_comm)
    overlapped(monkeypatch, bucket_bytes)
    with chainer.using_config("dtype", np.float64):
        parallel, single = train_both(make_model, lambda: chainer.optimizers.Adam(alpha=0.01),
                                      global_batches(), translator_loss, comm, perturb=0.1)
    assert max_difference(parallel, single) < 1e-9


class CountingIallreduce:
    """A communicator that records every nonblocking allreduce the hook starts."""

    def __init__(self, comm):
        self.comm, self.started = comm, []

    def __getattr__(self, name):
        return getattr(self.comm, name)

    def iallreduce(self, buffer):
        from mpi4py import MPI

        self.started.append(buffer.nbytes)
        return self.comm.mpi_comm.Iallreduce(MPI.IN_PLACE, buffer)


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=120)
def test_buckets_start_during_backward_and_reduce_each_gradient_once(mpi_comm):
    comm = CountingIallreduce(create_communicator("ring", mpi_comm=mpi_comm))
    b = 4
    with chainer.using_config("dtype", np.float64):
        model = make_model()
        optimizer = create_multi_node_optimizer(chainer.optimizers.SGD(lr=0.0), comm,
                                                overlap=True, bucket_bytes=4096).setup(model)
        examples = global_batches(1, b * mpi_comm.size)[0]
        mine = examples[mpi_comm.rank * b:(mpi_comm.rank + 1) * b]
        optimizer.update(translator_loss, model, mine)
        # the naive path on a copy of the same weights: the same averaged gradients
        naive_model = make_model()
        naive = create_multi_node_optimizer(chainer.optimizers.SGD(lr=0.0), comm.comm)
        naive.setup(naive_model)
        naive.update(translator_loss, naive_model, mine)
    hook = optimizer.overlap
    events = hook.events
    kinds = [kind for kind, _ in events]
    names = [name for bucket in hook.layout for name in bucket]
    params = dict(sorted(model.namedparams()))
    grads = {name: p.grad for name, p in params.items()}
    naive_grads = {name: p.grad for name, p in sorted(naive_model.namedparams())}
    layouts = mpi_comm.allgather(hook.layout)

    assert sorted(names) == sorted(params), "every parameter in exactly one bucket"
    assert len(hook.layout) > 2, "the test wants several buckets"
    assert layouts == [hook.layout] * mpi_comm.size, "every rank packs the same buckets"
    assert [i for kind, i in events if kind == "start"] == list(range(len(hook.layout)))
    assert sorted(i for kind, i in events if kind == "done") == list(range(len(hook.layout)))
    backward = [j for j, kind in enumerate(kinds) if kind == "backward"]
    assert kinds.index("start") < backward[len(backward) // 2], (
        "the first bucket waited past the middle of backward (are the nodes that stack the "
        "LSTM's weights still run last?)")
    assert sum(1 for kind in kinds[:backward[-1]] if kind == "start") >= len(hook.layout) - 1
    assert comm.started == [bucket.buffer.nbytes for bucket in hook.buckets], "one a bucket"
    assert sum(comm.started) == sum(p.array.nbytes for p in params.values())
    assert max_difference(grads, naive_grads) < 1e-12, "summed once and divided by size"


def test_overlap_needs_the_loss_function_path():
    from mpi4py import MPI

    comm = create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    model = make_mlp()
    optimizer = create_multi_node_optimizer(chainer.optimizers.SGD(), comm, overlap=True)
    optimizer.setup(model)
    loss = mlp_loss(model, mlp_examples(4))
    loss.backward()
    with pytest.raises(TypeError, match="update\\(lossfun"):
        optimizer.update()
    with pytest.raises(ValueError, match="zero_fill"):
        create_multi_node_optimizer(chainer.optimizers.SGD(), comm, overlap=True,
                                    zero_fill=False)


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=60)
def test_a_bucket_is_complete_after_init_and_sums_its_gradients(mpi_comm):
    rank, size = mpi_comm.rank, mpi_comm.size
    comm = create_communicator("mpi", mpi_comm=mpi_comm)
    params = dict(sorted(make_mlp().namedparams()))
    bucket = Bucket(["/l2/b", "/l1/W"], params, np.float64)
    fields = set(vars(bucket))
    ready_at_init = bucket.ready  # no consumers counted yet
    bucket.reset({"/l2/b": ["node a", "node b"], "/l1/W": ["node c"]})  # two nodes use l2/b
    ready = [bucket.ready]
    for name, share in (("/l2/b", np.full(3, rank + 1.0)), ("/l2/b", np.full(3, 10.0)),
                        ("/l1/W", np.full((8, 5), rank + 1.0))):
        bucket.add(name, share)
        bucket.count_down(name)
        ready.append(bucket.ready)
    bucket.start(comm)
    was_in_flight = bucket.wait()
    total = size * (size + 1) / 2  # sum over ranks of rank + 1

    assert fields == {"names", "sizes", "dtype", "buffer", "views", "uses_left", "written",
                      "request"}
    assert set(vars(bucket)) == fields, "a step added state that __init__ did not set"
    assert ready_at_init and ready == [False, False, False, True]
    assert was_in_flight and bucket.request is None and not bucket.wait()
    assert bucket.buffer.shape == (3 + 40,) and bucket.buffer.dtype == np.float64
    assert np.shares_memory(bucket.views["/l1/W"], bucket.buffer)
    np.testing.assert_array_equal(bucket.views["/l2/b"], total + 10.0 * size)
    np.testing.assert_array_equal(bucket.buffer[3:], np.full(40, total))
    bucket.reset({"/l2/b": [], "/l1/W": []})
    assert not bucket.buffer.any() and bucket.ready


def test_the_hook_holds_all_its_state_from_init():
    from mpi4py import MPI

    comm = create_communicator("ring", mpi_comm=MPI.COMM_SELF.Dup())
    model = make_mlp()
    optimizer = create_multi_node_optimizer(chainer.optimizers.SGD(), comm, overlap=True,
                                            bucket_bytes=64).setup(model)
    hook = optimizer.overlap
    fields = set(vars(hook))
    optimizer.update(mlp_loss, model, mlp_examples(4))
    assert set(vars(hook)) == fields, "a step added state that __init__ did not set"
    assert len(hook.buckets) > 1 and hook.layout == [bucket.names for bucket in hook.buckets]
    assert all(set(vars(bucket)) == set(vars(hook.buckets[0])) for bucket in hook.buckets)


@pytest.mark.mpi(ranks=[1, 2], timeout=60)
def test_a_bucket_share_is_copied_then_added_and_a_missing_one_is_zero(mpi_comm):
    """A bucket's buffer is new each step and never zeroed first: the first share of a
    gradient is copied in and the next ones added; a gradient that no node gave a share of
    (its backward returned None) is zero; the last step's buffer is left as it was."""
    comm = create_communicator("mpi", mpi_comm=mpi_comm)
    params = dict(sorted(make_mlp().namedparams()))
    bucket = Bucket(["/l2/b", "/l1/W"], params, np.float32)
    bucket.reset({"/l2/b": ["node a", "node b"], "/l1/W": ["node c"]})
    before = bucket.buffer
    before[...] = 7.0  # what a last step left there
    bucket.reset({"/l2/b": ["node a", "node b"], "/l1/W": ["node c"]})
    bucket.buffer[...] = np.nan  # np.empty's garbage, at worst
    bucket.add("/l2/b", np.full(3, 1.0))
    bucket.count_down("/l2/b")
    bucket.add("/l2/b", np.full(3, 2.0))
    bucket.count_down("/l2/b")
    bucket.count_down("/l1/W")  # node c's backward gave no gradient for it
    bucket.start(comm)
    bucket.wait()

    assert bucket.buffer is not before and (before == 7.0).all()
    np.testing.assert_array_equal(bucket.views["/l2/b"], 3.0 * mpi_comm.size)
    np.testing.assert_array_equal(bucket.views["/l1/W"], 0.0)
