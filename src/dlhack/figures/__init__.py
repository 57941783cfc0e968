"""The lessons' figures: each drawing a lesson shows is one call, so the lesson shows the idea.

A lesson keeps its data, its computation and its explanation, and hands the numbers to one
function here, e.g. ``figures.ring_steps(states)`` in lesson 2. One module per family of lessons;
each function's docstring names the lesson that uses it. Matplotlib is imported inside each
function, so ``import dlhack.figures`` stays light.
"""
from dlhack.figures.collectives import (
    allreduce_fit,
    cost_model,
    data_parallel,
    parallelisms,
    ring_steps,
    star_and_ring,
)
from dlhack.figures.debugging import bleu_shards, gpu_choice, triage
from dlhack.figures.fonts import use_japanese_font
from dlhack.figures.pipelines import (
    bucket_starts,
    overlap_steps,
    pipeline_schedules,
    split_the_model,
    staleness_cost,
    step_timeline,
    wire_bytes,
)
from dlhack.figures.scaling import (
    accuracy_vs_batch,
    bleu_curves,
    bleu_vs_batch,
    link_model,
    lr_warmup,
    scaling_report,
    schedules_compared,
    smith_runs,
    speedup,
    spirals,
)
from dlhack.figures.syncasync import (
    async_runs,
    divergence,
    staleness_by_rate,
    staleness_by_source,
    timelines,
    topologies,
)
from dlhack.figures.translator import (
    alignment,
    attention,
    nodes_and_ranks,
    sentence_lengths,
    seq2seq,
    training_curves,
)

__all__ = [
    "accuracy_vs_batch",
    "alignment",
    "allreduce_fit",
    "async_runs",
    "attention",
    "bleu_curves",
    "bleu_shards",
    "bleu_vs_batch",
    "bucket_starts",
    "cost_model",
    "data_parallel",
    "divergence",
    "gpu_choice",
    "link_model",
    "lr_warmup",
    "nodes_and_ranks",
    "overlap_steps",
    "parallelisms",
    "pipeline_schedules",
    "ring_steps",
    "scaling_report",
    "schedules_compared",
    "sentence_lengths",
    "seq2seq",
    "smith_runs",
    "speedup",
    "spirals",
    "split_the_model",
    "staleness_by_rate",
    "staleness_by_source",
    "staleness_cost",
    "star_and_ring",
    "step_timeline",
    "timelines",
    "topologies",
    "training_curves",
    "triage",
    "use_japanese_font",
    "wire_bytes",
]
