"""The simulated slow link delivers each allreduce ``alpha + n * beta`` after it may start, one
message at a time, sums for real, and gives both optimizer paths the same gradients.

Time is a fake clock that only ``sleep`` moves, so the checks are exact and take no time."""
import chainer
import numpy as np
import pytest

from dlhack.parallel import create_communicator, create_multi_node_optimizer
from dlhack.parallel.equivalence import max_difference
from dlhack.parallel.slowlink import SlowLink
from tests.parallel.tiny_mlp import make_mlp, mlp_examples, mlp_loss


class FakeTime:
    def __init__(self):
        self.now, self.slept = 0.0, []

    def clock(self):
        return self.now

    def sleep(self, seconds):
        self.slept.append(seconds)
        self.now += seconds


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=60)
def test_messages_arrive_after_alpha_plus_n_beta_one_at_a_time(mpi_comm):
    size = mpi_comm.size
    fake = FakeTime()
    link = SlowLink(create_communicator("mpi", mpi_comm=mpi_comm), alpha=1.0, beta=0.5,
                    clock=fake.clock, sleep=fake.sleep)
    one = np.full(1, mpi_comm.rank + 1.0)  # 8 bytes: arrives at 1 + 8 * 0.5 = 5
    two = np.full(2, 10.0 * mpi_comm.rank)  # 16 bytes, queued behind it: 5 + 1 + 8 = 14
    first, second = link.iallreduce(one), link.iallreduce(two)
    first.request.Wait()  # MPI has finished; the simulated wire has not
    early = first.Test()
    fake.now = 5.0
    on_time, second_early = first.Test(), second.Test()
    second.Wait()
    arrived_at = fake.now

    model = make_mlp()  # the blocking path: sums, then waits out the rest of the message
    model.cleargrads()
    mlp_loss(model, mlp_examples(4, seed=mpi_comm.rank)).backward()
    nbytes = sum(p.array.nbytes for p in model.params())
    link.multi_node_mean_grad(model, zero_fill=True)

    assert (early, on_time, second_early) == (False, True, False)
    assert arrived_at == 14.0
    assert fake.now == 14.0 + 1.0 + 0.5 * nbytes
    assert one[0] == size * (size + 1) / 2 and np.all(two == 10.0 * size * (size - 1) / 2)
    assert (link.messages, link.bytes) == (3, 24 + nbytes)


@pytest.mark.mpi(ranks=[1, 2], timeout=60)
def test_both_paths_over_a_slow_link_take_the_same_step(mpi_comm):
    fake = FakeTime()
    link = SlowLink(create_communicator("mpi", mpi_comm=mpi_comm), alpha=1e-3, beta=1e-6,
                    clock=fake.clock, sleep=fake.sleep)
    examples = mlp_examples(4, seed=mpi_comm.rank)
    models = {}
    for overlap in (False, True):
        model = make_mlp()
        optimizer = create_multi_node_optimizer(chainer.optimizers.SGD(lr=0.1), link,
                                                overlap=overlap, bucket_bytes=64)
        optimizer.setup(model)
        optimizer.update(mlp_loss, model, examples)
        models[overlap] = {name: p.array for name, p in sorted(model.namedparams())}
    assert max_difference(models[False], models[True]) < 1e-6
    assert max_difference(models[True], {n: p.array for n, p in make_mlp().namedparams()}) > 0
    assert link.messages > 2  # the overlapped step sent its buckets over the link too
