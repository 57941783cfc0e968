"""The per-rank time breakdown and its verdict: each planted slowdown is named, and each
planted delay lands in its own phase."""
import json
import subprocess
import sys
import time

import chainer
import chainer.functions as F
import chainer.links as L
import numpy as np
import pytest
from mpi4py import MPI

from dlhack.parallel import Communicator, create_communicator, create_multi_node_optimizer
from dlhack.step_profile import PHASES, ProfilingUpdater, format_breakdown, format_waits, verdict
from tests.support import course_env


def summary(*per_rank, threads=1):
    return {"ranks": [{"rank": r, "ms": dict(zip(PHASES, ms)), "threads": threads}
                      for r, ms in enumerate(per_rank)]}


BALANCED = summary((1, 40, 60, 1, 3, 2), (1, 41, 59, 1, 3, 2))


def test_balanced_compute_bound_run_has_no_usual_cause():
    text = verdict(BALANCED, batchsize=64, ranks_per_node=2, cores=2)
    assert "No usual cause" in text


def test_oversubscribed_threads_are_named():
    text = verdict(summary((1, 40, 60, 1, 3, 2), threads=4), batchsize=64, ranks_per_node=2,
                   cores=2)
    assert "oversubscribed" in text and "OMP_NUM_THREADS=1" in text


def test_tiny_batch_is_named():
    text = verdict(summary((0, 3, 4, 1, 5, 4), (0, 3, 4, 1, 5, 4)), batchsize=1, cores=2)
    assert "per-rank batch of 1" in text


def test_waiting_for_a_straggler_is_named():
    text = verdict(summary((1, 40, 60, 80, 3, 2), (1, 90, 130, 1, 3, 2)), batchsize=64, cores=2)
    assert "wait for each other" in text


def with_median_waits(summary, *medians):
    for rank, median in zip(summary["ranks"], medians):
        rank["wait_median_ms"] = median
    return summary


def test_a_wait_at_every_step_is_told_from_a_few_long_waits():
    def straggled(*medians):
        return verdict(with_median_waits(summary((1, 40, 60, 80, 3, 2), (1, 90, 130, 1, 3, 2)),
                                         *medians), batchsize=64, cores=2)

    every_step = straggled(78.0, 0.9)  # rank 0 waits about as long at its median step
    assert "wait for each other" in every_step and "every step" in every_step
    assert "a few long steps" not in every_step
    assert "--balance --balance-speed" in every_step  # a slower core: its share follows it
    spells = straggled(0.2, 0.1)  # the same mean wait, held by a few steps
    assert "wait for each other" in spells and "a few long steps" in spells
    assert "every step" not in spells


def test_a_small_wait_that_grew_most_is_explained_not_called_in_step():
    """Under the 10% that makes the wait a cause of its own, a wait that grew more than any
    phase is still named, with its kind, rather than "ranks are in step"."""
    one = summary((0.3, 15.2, 19.3, 0.0, 0.1, 1.0))

    def judged(*medians, wait=(1.8, 1.4)):
        two = summary((0.4, 15.0, 19.0, wait[0], 0.9, 0.5), (0.4, 15.2, 19.3, wait[1], 0.7, 0.6))
        return verdict(with_median_waits(two, *medians), baseline=one, batchsize=64, cores=2)

    spells = judged(0.04, 0.22)  # 1.6 ms on average, 4% of a step, in a few long steps
    assert "'wait' grew most" in spells and "wait 4% of a step on average" in spells
    assert "a few long steps" in spells and "in step" not in spells
    every_step = judged(1.7, 1.3)
    assert "every step" in every_step and "in step" not in every_step
    assert "wait for each other" not in spells + every_step  # not the large-wait cause
    grew_backward = judged(0.04, 0.22, wait=(0.1, 0.1))  # the wait no longer grew most
    assert "No usual cause" in grew_backward and "on average" not in grew_backward
    # every phase shrank and the wait grew by a hair: under 1% of a step is not worth a cause
    hair = verdict(with_median_waits(summary((0.3, 15.0, 19.0, 0.2, 0.1, 0.9)), 0.0),
                   baseline=one, batchsize=64, cores=2)
    assert "'wait' grew most" in hair and "No usual cause" in hair and "every step" not in hair


def test_the_waits_line_gives_each_rank_its_median_and_mean_wait():
    line = format_waits(with_median_waits(summary((1, 40, 60, 3.5, 3, 2),
                                                  (1, 41, 59, 0.5, 3, 2)), 0.02, 0.25))
    assert "rank 0 0.02 and 3.50 ms" in line and "rank 1 0.25 and 0.50 ms" in line
    assert line.endswith("of a 108.0 ms step")


def test_baseline_comparison_names_the_phase_that_grew():
    text = verdict(summary((1, 40, 60, 1, 30, 2)), baseline=BALANCED, batchsize=64, cores=8)
    assert "'allreduce' grew most" in text


def test_breakdown_table_has_a_row_per_rank():
    assert len(format_breakdown(BALANCED).splitlines()) == 3


def with_kernel(summary, *per_rank):
    for rank, (ms, faults, *cpu) in zip(summary["ranks"], per_rank):
        rank.update(kernel_ms=ms, faults=faults, **({"cpu_ms": cpu[0]} if cpu else {}))
    return summary


def test_time_in_the_kernel_is_named_only_with_page_faults():
    def judged(*per_rank):
        return verdict(with_kernel(summary((1, 40, 60, 1, 3, 2), (1, 41, 59, 1, 3, 2)),
                                   *per_rank), batchsize=64, cores=2)

    faulting = judged((1.0, 40), (20.0, 3500))  # 20 ms of a 107 ms step
    assert "The kernel takes 19% of rank 1's CPU time in a step (3500 page faults per step)" \
        in faulting
    assert "--no-keep-memory" in faulting and "No usual cause" not in faulting
    assert "page faults" not in judged((20.0, 30), (20.0, 30))  # a driver's calls, say
    assert "No usual cause" in judged((3.0, 3500), (4.0, 3500))  # under 5% of the step
    # a rank that waits for its core: 20 ms of its 100 ms of CPU, though the step takes 500 ms
    crowded = verdict(with_kernel(summary((1, 200, 300, 1, 3, 2), (1, 200, 300, 1, 3, 2)),
                                  (20.0, 3500, 100.0), (2.0, 40, 90.0)), batchsize=64, cores=2)
    assert "The kernel takes 20% of rank 0's CPU time in a step" in crowded
    assert "page faults" not in judged((3.0, 3500, 100.0), (4.0, 3500, 100.0))  # 4% of the CPU
    table = format_breakdown(with_kernel(summary((1, 40, 60, 1, 3, 2)), (6.6, 3689.4)))
    assert table.splitlines()[-1] == "in the kernel, per step: rank 0 6.6 ms (3689 page faults)"


def profiled_run(tmp_path, threads, batchsize, *flags, units=16, layers=1):
    env = course_env(threads=threads)
    proc = subprocess.run(
        ["mpiexec", "-n", "2", sys.executable, "-m", "dlhack.train", "--profile", *flags,
         "--iterations", "8", "--batchsize", str(batchsize), "--units", str(units),
         "--layers", str(layers), "--n-train", "300", "--eval-every", "0", "--n-eval", "8", "--no-progress",
         "--out", str(tmp_path)], check=False, env=env, capture_output=True, text=True,
        timeout=180)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return proc.stdout, json.loads((tmp_path / "metrics.json").read_text())["verdict"]


@pytest.mark.parametrize("threads, batchsize, cause", [
    (1, 1, "per-rank batch of 1"),
    (2, 32, "oversubscribed"),
])
def test_train_profile_names_a_planted_slowdown(tmp_path, threads, batchsize, cause):
    stdout, text = profiled_run(tmp_path, threads, batchsize)
    assert cause in text
    assert "allreduce" in stdout and cause in stdout  # rank 0 printed breakdown and verdict


@pytest.mark.parametrize("flags", [(), ("--no-keep-memory",)])
def test_memory_given_back_every_step_is_named_by_its_page_faults(tmp_path, flags):
    """The demo model on 2 ranks: the gradients the mean replaces are freed mid-step; glibc
    gives them back and the next step faults them in again, unless dlhack train keeps them."""
    stdout, text = profiled_run(tmp_path, 1, 32, *flags, units=128, layers=2)
    faults = [r["faults"] for r in
              json.loads((tmp_path / "metrics.json").read_text())["profile"]["ranks"]]
    assert "in the kernel, per step: rank 0" in stdout
    if flags:
        assert "page faults per step" in text and min(faults) > 1000, (faults, text)
    else:
        assert "page faults" not in text and max(faults) < 500, (faults, text)


# The profiler around the real multi-node optimizer ----------------------------------------
#
# Each phase gets a planted delay of its own, so a phase that timed the wrong call, or that
# another phase's time leaked into, comes out short of its delay.

DELAY = {"data": 0.004, "forward": 0.008, "backward": 0.012, "allreduce": 0.016,
         "optimizer": 0.020}  # seconds


class SlowBackward(chainer.FunctionNode):
    """The identity, whose backward pass sleeps ``DELAY["backward"]``."""

    def forward(self, inputs):
        return inputs[0].copy(),

    def backward(self, indexes, grad_outputs):
        time.sleep(DELAY["backward"])
        return grad_outputs


class SlowModel(chainer.Chain):
    """Linear -> softmax cross entropy; the forward pass sleeps ``DELAY["forward"]``."""

    def __init__(self, straggle=0.0, every=1):
        super().__init__()
        self.straggle = straggle  # extra forward time: this rank is a straggler
        self.every, self.calls = every, 0  # ... at every ``every``-th step
        with self.init_scope():
            normal = chainer.initializers.Normal(0.5, rng=np.random.RandomState(0))
            self.l1 = L.Linear(4, 3, initialW=normal)  # the same weights on every rank

    def forward(self, x, t):
        late = self.straggle if self.calls % self.every == 0 else 0.0
        self.calls += 1
        time.sleep(DELAY["forward"] + late)
        return F.softmax_cross_entropy(SlowBackward().apply((self.l1(x),))[0], t)


class SlowSGD(chainer.optimizers.SGD):
    """SGD whose update sleeps ``DELAY["optimizer"]`` first."""

    def update(self, lossfun=None, *args, **kwds):
        time.sleep(DELAY["optimizer"])
        super().update(lossfun, *args, **kwds)


def slow_converter(batch, device=None):
    time.sleep(DELAY["data"])
    return chainer.dataset.concat_examples(batch, device)


def count_and_slow_down_allreduce(comm):
    """Wrap ``comm.multi_node_mean_grad`` (on the instance) to count calls and sleep."""
    calls = []
    real = comm.multi_node_mean_grad

    def allreduce(model, zero_fill=False):
        calls.append(zero_fill)
        time.sleep(DELAY["allreduce"])
        return real(model, zero_fill)

    comm.multi_node_mean_grad = allreduce
    return calls, allreduce


def multi_node_optimizer(actual, comm):
    """ChainerMN's multi-node optimizer with ChainerMN's communicator, ours with ours."""
    if isinstance(comm, Communicator):
        return create_multi_node_optimizer(actual, comm)
    import chainermn

    return chainermn.create_multi_node_optimizer(actual, comm)


def profile_toy(comm, iterations=7, straggle=0.0, every=1):
    rng = np.random.RandomState(1)
    data = list(zip(rng.normal(size=(64, 4)).astype(np.float32),
                    rng.randint(0, 3, 64).astype(np.int32)))
    model = SlowModel(straggle, every)
    optimizer = multi_node_optimizer(SlowSGD(lr=0.1), comm)
    optimizer.setup(model)
    it = chainer.iterators.SerialIterator(data, 8, shuffle=False)
    updater = ProfilingUpdater(it, optimizer, comm, converter=slow_converter)
    for _ in range(iterations):
        updater.update()
    return updater, optimizer


@pytest.mark.parametrize("name, allreduces", [("ring", 7), ("chainermn:naive", 6)])
def test_phases_time_the_real_calls_and_add_up_to_the_step(name, allreduces):
    # ChainerMN's optimizer spends its first update on the broadcast alone: one allreduce less.
    comm = create_communicator(name, mpi_comm=MPI.COMM_SELF)
    calls, counted = count_and_slow_down_allreduce(comm)
    updater, optimizer = profile_toy(comm)
    ms = updater.breakdown()
    step_ms = 1000 * updater.elapsed / updater.timed_steps
    assert updater.timed_steps == 5  # 7 steps, the first 2 left out
    assert len(calls) == allreduces and all(calls)  # the optimizer's own calls, zero_fill on
    for phase, seconds in DELAY.items():
        assert ms[phase] >= 1000 * seconds, (phase, ms)
    assert sum(ms.values()) == pytest.approx(step_ms, rel=0.05, abs=1.0), (ms, step_ms)
    # Nothing stays patched: the communicator and the optimizer are as they were.
    assert vars(comm)["multi_node_mean_grad"] is counted
    assert "update" not in vars(optimizer.actual_optimizer)
    summary = updater.summary()
    assert [r["rank"] for r in summary["ranks"]] == [0] and summary["ranks"][0]["ms"] == ms


def test_profiler_wants_a_multi_node_optimizer():
    optimizer = chainer.optimizers.SGD()
    optimizer.setup(SlowModel())
    it = chainer.iterators.SerialIterator([(np.zeros(4, np.float32), np.int32(0))], 1)
    with pytest.raises(TypeError, match="create_multi_node_optimizer"):
        ProfilingUpdater(it, optimizer, create_communicator("ring", mpi_comm=MPI.COMM_SELF))


@pytest.mark.mpi(ranks=[1, 2, 3], timeout=120)
@pytest.mark.parametrize("name", ["ring", "chainermn:naive"])
def test_a_straggler_shows_as_the_others_wait(mpi_comm, name):
    comm = create_communicator(name, mpi_comm=mpi_comm)
    straggler = comm.size - 1
    extra = 0.040 if comm.size > 1 else 0.0  # the last rank's forward pass takes 40 ms more
    calls, _ = count_and_slow_down_allreduce(comm)
    updater, _ = profile_toy(comm, straggle=extra if comm.rank == straggler else 0.0)
    summary = updater.summary()
    ms = {r["rank"]: r["ms"] for r in summary["ranks"]}
    step_ms = 1000 * updater.elapsed / updater.timed_steps
    assert sorted(ms) == list(range(comm.size))
    assert len(calls) == (7 if name == "ring" else 6)
    assert sum(ms[comm.rank].values()) == pytest.approx(step_ms, rel=0.05, abs=1.0)
    assert ms[straggler]["forward"] >= 1000 * (DELAY["forward"] + extra)
    for rank in range(comm.size - 1):  # everybody else waits for the straggler at the barrier
        assert ms[rank]["wait"] >= 0.75 * 1000 * extra, (rank, ms[rank])
        assert summary["ranks"][rank]["wait_median_ms"] >= 0.75 * 1000 * extra  # every step


@pytest.mark.mpi(ranks=[2], timeout=120)
def test_a_straggler_now_and_then_leaves_the_median_step_without_a_wait(mpi_comm):
    # Rank 1's forward takes 150 ms more at steps 0, 3 and 6: two of the five timed steps (long
    # enough that a busy machine's own waits at the other steps stay far below them).
    comm = create_communicator("ring", mpi_comm=mpi_comm)
    updater, _ = profile_toy(comm, straggle=0.150 if comm.rank == 1 else 0.0, every=3)
    summary = updater.summary()
    waiting = summary["ranks"][0]
    assert len(updater.waits) == updater.timed_steps == 5
    assert waiting["ms"]["wait"] >= 0.75 * 1000 * 0.150 * 2 / 5  # the mean holds two waits
    assert waiting["wait_median_ms"] < 0.25 * waiting["ms"]["wait"]
    if comm.rank == 0:
        assert sorted(updater.waits)[-2] >= 0.75 * 0.150  # the two long waits, in seconds
        assert "a few long steps" in verdict(summary, batchsize=8, cores=2)


def test_profile_of_an_overlapped_run_charges_the_exposed_wait_to_allreduce(tmp_path):
    """With overlap=True, backward holds what it hides; allreduce is the wait after backward."""
    proc = subprocess.run(
        ["mpiexec", "-n", "2", sys.executable, "-m", "dlhack.train", "--n-train", "200",
         "--units", "16", "--layers", "1", "--batchsize", "16", "--n-eval", "8",
         "--no-progress", "--iterations", "6", "--eval-every", "0", "--profile", "--overlap",
         "--out", str(tmp_path)],
        check=False, capture_output=True, text=True, timeout=180,
        env=course_env())
    assert proc.returncode == 0, proc.stderr[-3000:]
    for rank in json.loads((tmp_path / "metrics.json").read_text())["profile"]["ranks"]:
        ms = rank["ms"]
        assert ms["backward"] > 0 and ms["forward"] > 0, ms
        assert ms["wait"] == 0.0, ms  # no barrier: the buckets were already on their way
