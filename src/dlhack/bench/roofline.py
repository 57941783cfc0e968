"""The translator against this core's limit: the sgemm rate at the step's own shapes.

    meter, phases = timed_steps(model, optimizer, batches, metered=True)
    rate = sgemm_rate(meter.shapes())           # FLOP/s of this core's BLAS at those shapes
    print(f"{flops / seconds / rate:.2f} of the sgemm rate")

A training step is almost all matrix products, so its speed limit on a CPU is the rate the BLAS
reaches for those very products. ``sgemm_rate`` replays the distinct shapes a step ran (from a
``dlhack.bench.flops.GemmMeter``) on fresh float32 operands, best of a few tries, and weighs
each shape by its calls: the seconds a step's products would take at the rate this core's sgemm
reaches for them. ``timed_steps`` times forward, backward and the optimizer of each step and,
metered, the products inside each phase; the rest of a phase is Chainer, numpy's elementwise
work and Python. Costs: the replay takes about as long as the products of one step, times
``tries``; the meter adds a few microseconds per Chainer function. ``phase_table`` with the
replay's seconds per shape gives each phase's products at the sgemm rate beside their time in
the step: what they lose there (operands no longer in cache, for one) apart from the rest.
"""
import time

import numpy as np

from dlhack.bench.flops import GemmMeter

PHASES = ("forward", "backward", "optimizer")


def blas_kernel():
    """``"openblas 0.3.23 Haswell, 1 thread"``: the BLAS numpy runs, as threadpoolctl sees it."""
    from threadpoolctl import threadpool_info

    blas = [i for i in threadpool_info() if i.get("user_api") == "blas"]
    return "; ".join(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}, "
                     f"{i.get('num_threads')} thread(s)" for i in blas) or "no BLAS found"


def sgemm_seconds(batch, m, k, n, tries=3, min_seconds=0.02, timer=time.perf_counter):
    """Seconds of one float32 product ``(batch, m, k) @ (batch, k, n)``, best of ``tries``
    (``timer``: ``time.process_time`` counts only the seconds this process ran)."""
    rng = np.random.RandomState(0)
    shape_a, shape_b = ((batch, m, k), (batch, k, n)) if batch > 1 else ((m, k), (k, n))
    a = rng.standard_normal(shape_a).astype(np.float32)
    b = rng.standard_normal(shape_b).astype(np.float32)
    out = np.matmul(a, b)
    start = time.perf_counter()
    np.matmul(a, b, out=out)  # a first call, to size the loop
    reps = max(1, int(min_seconds / max(time.perf_counter() - start, 1e-7)))
    best = float("inf")
    for _ in range(tries):
        start = timer()
        for _ in range(reps):
            np.matmul(a, b, out=out)
        best = min(best, (timer() - start) / reps)
    return best


def replay_seconds(shapes, tries=3, timer=time.perf_counter):
    """``{(batch, m, k, n): seconds of one call}``: each distinct shape of ``shapes`` replayed
    alone (``sgemm_seconds``), its operands hot in cache."""
    return {shape: sgemm_seconds(*shape, tries, timer=timer) for shape in shapes}


def sgemm_rate(shapes, tries=3, timer=time.perf_counter, replayed=None):
    """FLOP/s of this core's sgemm over ``{(batch, m, k, n): calls}``, each shape weighed by
    its calls and its operations (``replayed``: the shapes' ``replay_seconds``, if measured)."""
    replayed = replayed or replay_seconds(shapes, tries, timer)
    flops = seconds = 0.0
    for (batch, m, k, n), calls in shapes.items():
        flops += calls * 2 * batch * m * k * n
        seconds += calls * replayed[batch, m, k, n]
    return flops / seconds


def train_step(model, optimizer, xs, ys, clock=None):
    """One step: forward, backward, update; ``clock(phase)`` is called as each phase starts,
    and with ``None`` at the end."""
    clock = clock or (lambda phase: None)
    clock("forward")
    model.cleargrads()
    loss = model(xs, ys)
    clock("backward")
    loss.backward()
    clock("optimizer")
    optimizer.update()
    clock(None)
    return float(loss.array)


class PhaseClock:
    """Seconds per phase, from calls ``clock(phase)`` at the start of each (``None``: stop);
    tells a ``GemmMeter`` which phase its products belong to."""

    def __init__(self, meter=None, timer=time.perf_counter):
        self.seconds = dict.fromkeys(PHASES, 0.0)
        self.steps = []  # seconds of each whole step
        self.meter, self.timer = meter, timer
        self._phase, self._last, self._step = None, None, None

    def __call__(self, phase):
        now = self.timer()
        if self._phase is not None:
            self.seconds[self._phase] += now - self._last
        if self._phase is None and phase is not None:
            self._step = now
        if phase is None and self._step is not None:
            self.steps.append(now - self._step)
        self._phase, self._last = phase, now
        if self.meter is not None:
            self.meter.phase = phase


def timed_steps(model, optimizer, batches, metered=False, timer=time.perf_counter):
    """Train on ``batches`` (lists of (src, tgt) pairs); return ``(meter, clock)``: the
    ``GemmMeter`` (None unless ``metered``) and the ``PhaseClock`` with each phase's seconds
    and each step's, both read from ``timer``."""
    meter = GemmMeter(timer) if metered else None
    clock = PhaseClock(meter, timer)
    if meter is not None:
        meter.__enter__()
    try:
        for batch in batches:
            train_step(model, optimizer, [x for x, _ in batch], [y for _, y in batch], clock)
    finally:
        if meter is not None:
            meter.__exit__(None, None, None)
    return meter, clock


def phase_table(clock, meter, steps, replayed=None):
    """``{phase: {"ms": per step, "gemm_ms": per step}}`` (plus "step") from a metered run;
    with ``replayed`` (``replay_seconds``), also "hot_ms": the same products at the sgemm rate,
    each call as long as its shape took replayed alone."""
    table = {p: {"ms": 1000 * clock.seconds[p] / steps,
                 "gemm_ms": 1000 * meter.seconds(p) / steps} for p in PHASES}
    if replayed is not None:
        for p in PHASES:
            table[p]["hot_ms"] = 1000 * sum(replayed[shape] for phase, shape, _ in meter.calls
                                            if phase == p) / steps
    table["step"] = {k: sum(table[p][k] for p in PHASES) for k in table["forward"]}
    return table


def format_phases(table):
    """Lines: each phase's ms per step, the products' share of it and the rest; where the
    table has "hot_ms", the products split into their time at the sgemm rate ("GEMM hot") and
    what they lost in the step against it ("lost": their operands cold in cache, for one)."""
    hot = "hot_ms" in table["step"]
    lines = [f"{'phase':>10} {'ms/step':>9} {'GEMM ms':>9}"
             + (f" {'GEMM hot':>9} {'lost':>9}" if hot else "") + f" {'other ms':>9}"]
    for p in (*PHASES, "step"):
        row = table[p]
        split = f" {row['hot_ms']:>9.1f} {row['gemm_ms'] - row['hot_ms']:>9.1f}" if hot else ""
        lines.append(f"{p:>10} {row['ms']:>9.1f} {row['gemm_ms']:>9.1f}{split} "
                     f"{row['ms'] - row['gemm_ms']:>9.1f}")
    return lines
