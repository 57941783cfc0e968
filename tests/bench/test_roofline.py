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
    # given the replay's seconds, the rate is their calls' flops over their calls' seconds
    replayed = {(1, 32, 16, 8): 1e-6, (2, 4, 4, 4): 4e-6}
    flops = 3 * 2 * 32 * 16 * 8 + 2 * 2 * 4 * 4 * 4
    rate = roofline.sgemm_rate({(1, 32, 16, 8): 3, (2, 4, 4, 4): 1}, replayed=replayed)
    assert np.isclose(rate, flops / 7e-6)


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
    assert "hot" not in roofline.format_phases(table)[0]
    # each product at the seconds its shape took replayed alone: 1 ms here, whatever the shape
    replayed = dict.fromkeys(meter.shapes(), 1e-3)
    table = roofline.phase_table(clock, meter, len(batches), replayed)
    calls = {p: sum(1 for phase, _, _ in meter.calls if phase == p) for p in roofline.PHASES}
    for phase in roofline.PHASES:
        assert np.isclose(table[phase]["hot_ms"], calls[phase] / len(batches))
    assert np.isclose(table["step"]["hot_ms"], len(meter.calls) / len(batches))
    lines = roofline.format_phases(table)
    assert "GEMM hot" in lines[0] and "lost" in lines[0]
    step = lines[-1].split()
    row = table["step"]
    assert step[3:5] == [f"{row['hot_ms']:.1f}", f"{row['gemm_ms'] - row['hot_ms']:.1f}"]
    assert "thread" in roofline.blas_kernel()
    assert isinstance(chainer.config.train, bool)
