"""The FLOP counter, by hand on a tiny model and against the products a real step runs."""
import importlib

import numpy as np
import pytest

from dlhack.bench.flops import METERED_MODULES, GemmMeter, count_flops, step_flops
from dlhack.model.fused import FusedSeq2seq
from dlhack.model.seq2seq import Seq2seq

V = 40


def test_count_by_hand_without_attention():
    # H = 2, one layer, 3 target words; sources of 2 and 1 tokens, targets of 1 and 2 words,
    # so the decoder reads 2 and 3 tokens (<s> y). Forward, per token: input projection
    # 2 * H * 4H = 32, recurrence 32; output layer 2 * H * V = 12 per decoder token.
    # A training step is 3x the forward products (the gradients of input and of weight).
    count = count_flops(2, 1, 3, False, [2, 1], [1, 2])
    useful_tokens, padded_tokens = (2 + 1) + (2 + 3), 2 * 2 + 2 * 3
    assert count.useful == {"lstm input": 3 * 32 * useful_tokens,
                            "lstm recurrence": 3 * 32 * useful_tokens,
                            "attention": 0, "output": 3 * 12 * 5}
    assert count.padded == {"lstm input": 3 * 32 * padded_tokens,
                            "lstm recurrence": 3 * 32 * padded_tokens,
                            "attention": 0, "output": 3 * 12 * 6}
    assert count.useful_total == 3 * (32 * 8 * 2 + 60)


def test_count_by_hand_with_attention_and_layers():
    # H = 3, two layers: 2 * 3 * 12 = 72 per token and layer for each of input and recurrence.
    # Attention: scores and context, 2H = 6 each per (target, source) pair, and the feature
    # layer 2 * 2H * H = 36 per decoder token. One sentence: 2 source tokens, decoder 4 tokens.
    count = count_flops(3, 2, 5, True, [2], [3])
    assert count.useful == count.padded  # one sentence: nothing to pad
    assert count.useful["lstm input"] == 3 * 72 * 2 * (2 + 4)
    assert count.useful["attention"] == 3 * (12 * 2 * 4 + 36 * 4)
    assert count.useful["output"] == 3 * 2 * 3 * 5 * 4


def test_padding_is_counted_apart():
    count = count_flops(4, 1, 6, True, [5, 1, 1], [1, 1, 7])
    for part in ("lstm input", "lstm recurrence", "attention", "output"):
        assert count.padded[part] > count.useful[part] > 0
    assert all(v > 0 for v in count.elementwise.values())


def batch(seed, n=7):
    rng = np.random.RandomState(seed)
    xs = [rng.randint(3, V, rng.randint(1, 9)).astype(np.int32) for _ in range(n)]
    ys = [rng.randint(3, V, rng.randint(1, 9)).astype(np.int32) for _ in range(n)]
    return xs, ys


def metered_step(model, xs, ys):
    with GemmMeter() as meter:
        model(xs, ys).backward()
    return meter


@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("layers", [1, 2])
def test_readable_model_runs_the_padded_count(attention, layers):
    """Seq2seq computes on padded (B, T) arrays: its products are the padded count."""
    xs, ys = batch(layers)
    model = Seq2seq(V, V + 7, n_units=6, n_layers=layers, dropout=0.1, attention=attention)
    meter = metered_step(model, xs, ys)
    assert meter.flops() == step_flops(model, xs, ys).padded_total
    assert len(meter.calls) > 3 * layers


@pytest.mark.parametrize("attention", [False, True])
@pytest.mark.parametrize("layers", [1, 2])
def test_fused_model_runs_the_useful_count(attention, layers):
    """FusedSeq2seq packs its batches: only real tokens, except attention (padded arrays)."""
    xs, ys = batch(10 + layers)
    model = FusedSeq2seq(V, V + 7, n_units=6, n_layers=layers, dropout=0.1,
                         attention=attention)
    count = step_flops(model, xs, ys)
    expected = count.useful_total - count.useful["attention"] + count.padded["attention"]
    assert metered_step(model, xs, ys).flops() == expected


def test_meter_restores_the_products_and_times_them():
    originals = {name: importlib.import_module(name).matmul for name in METERED_MODULES}
    xs, ys = batch(3)
    meter = metered_step(Seq2seq(V, V, n_units=4, n_layers=1, attention=False), xs, ys)
    assert {name: importlib.import_module(name).matmul for name in METERED_MODULES} == originals
    assert meter.seconds() > 0
    assert sum(meter.shapes().values()) == len(meter.calls)
