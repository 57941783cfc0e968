"""The roofline's parts: the sgemm replay, the phase clock, a metered step."""
import chainer
import numpy as np

from dlhack.bench import roofline
from dlhack.model.fused import FusedSeq2seq
from dlhack.model.packed_adam import PackedAdam


def test_sgemm_rate_weighs_shapes_by_calls():
    one = roofline.sgemm_seconds(1, 32, 16, 8, tries=2, min_seconds=0.001)
    assert 0 < one < 0.01
    rate = roofline.sgemm_rate({(1, 32, 16, 8): 3, (2, 4, 4, 4): 1}, tries=2)
    assert np.isfinite(rate) and rate > 0


def test_phase_clock_adds_up_steps():
    ticks = iter(range(100))
    clock = roofline.PhaseClock(timer=lambda: next(ticks))
    for phase in ("forward", "backward", "optimizer", None):
        clock(phase)
    for phase in ("forward", "backward", "optimizer", None):
        clock(phase)
    assert clock.seconds == {"forward": 2, "backward": 2, "optimizer": 2}
    assert clock.steps == [3, 3]


def test_metered_steps_split_each_phase():
    rng = np.random.RandomState(0)
    batches = [[(rng.randint(3, 20, rng.randint(1, 6)).astype(np.int32),
                 rng.randint(3, 20, rng.randint(1, 6)).astype(np.int32)) for _ in range(4)]
               for _ in range(2)]
    np.random.seed(0)
    model = FusedSeq2seq(20, 20, n_units=8, n_layers=2, attention=False)
    optimizer = PackedAdam()
    optimizer.setup(model)
    meter, clock = roofline.timed_steps(model, optimizer, batches, metered=True)
    table = roofline.phase_table(clock, meter, len(batches))
    assert meter.flops("forward") > 0 and meter.flops("backward") > meter.flops("forward")
    assert meter.flops("optimizer") == 0
    for phase in roofline.PHASES:
        assert 0 <= table[phase]["gemm_ms"] <= table[phase]["ms"]
    assert len(roofline.format_phases(table)) == 5
    assert "thread" in roofline.blas_kernel()
    assert isinstance(chainer.config.train, bool)
