"""Numbers the lessons quote in prose, recomputed from their source and checked against the text.

A lesson is read more often than it is run, so a number in its prose must not drift from the
formula or the code it comes from. Each row of ``FACTS`` names a lesson, computes a value (from
the lesson's own code cells where it can: ``lesson_code`` takes a function or a constant out of
them, so changing the code without the prose fails here), says how the prose writes it, and
with what tolerance. To cover another number, add a row.

The prose is compared with its whitespace collapsed, so a line break inside a quoted phrase
does not matter. A row that is a known slip awaiting its fix carries ``pytest.mark.xfail``
with ``strict=True``: once the lesson is fixed the row passes, the xfail turns into a failure,
and its mark must go.
"""
import ast
import json
import math
import re
from collections.abc import Callable
from functools import cache
from typing import Any, NamedTuple

import numpy as np
import pytest
from IPython.core.inputtransformer2 import TransformerManager

from tests.support import ROOT


def lesson_path(lesson):
    (path,) = (ROOT / "lessons").glob(f"{lesson}_*.ipynb")
    return path


@cache
def cells(lesson, kind):
    nb = json.loads(lesson_path(lesson).read_text(encoding="utf-8"))
    return tuple("".join(c["source"]) for c in nb["cells"] if c["cell_type"] == kind)


@cache
def code_trees(lesson):
    """The lesson's code cells as Python syntax trees (IPython's ! and %% lines translated)."""
    trees = []
    for source in cells(lesson, "code"):
        try:
            trees.append(ast.parse(TransformerManager().transform_cell(source)))
        except SyntaxError:
            continue
    return tuple(trees)


def prose(lesson):
    """The lesson's markdown, whitespace collapsed to single spaces."""
    return re.sub(r"\s+", " ", "\n".join(cells(lesson, "markdown")))


def lesson_code(lesson, name):
    """The top-level function or literal constant ``name`` defined in a code cell of ``lesson``.

    A function is executed on its own (with ``np`` and ``math`` available), a constant read with
    ``ast.literal_eval``; nothing else of the notebook runs.
    """
    for tree in code_trees(lesson):
        for node in tree.body:
            if isinstance(node, ast.FunctionDef) and node.name == name:
                namespace = {"np": np, "math": math}
                # the course's own lesson code, one function definition of it: not learner input
                code = compile(ast.Module([node], []), f"<lesson {lesson}>", "exec")
                exec(code, namespace)  # noqa: S102
                return namespace[name]
            if isinstance(node, ast.Assign) and any(
                    isinstance(t, ast.Name) and t.id == name for t in node.targets):
                return ast.literal_eval(node.value)
    raise LookupError(f"lesson {lesson} defines no top-level {name!r} in its code cells")


def ring_08(n_bytes, ranks, link):
    """Lesson 8's ring allreduce time over one of its LINKS (alpha, bandwidth 1/beta)."""
    alpha, bandwidth = lesson_code("08", "LINKS")[link]
    return lesson_code("08", "ring_allreduce_s")(n_bytes, ranks, alpha, 1 / bandwidth)


def simulated_staleness(workers):
    """Lowest and highest staleness of ``workers`` in lesson 4's timeline picture."""
    simulate = lesson_code("04", "simulate")
    bars, _updates = simulate((1.0, 1.3, 2.5), 7.6, synchronous=False)
    stale = [s for w, _start, _end, s in bars if w in workers]
    return (min(stale), max(stale))


def timeline_defaults():
    """The per-worker compute times that lesson 4's timeline draws (its ``COMPUTE, UNTIL = ...``)."""
    for tree in code_trees("04"):
        for node in tree.body:
            if isinstance(node, ast.Assign) and isinstance(node.targets[0], ast.Tuple) and [
                    getattr(t, "id", None) for t in node.targets[0].elts] == ["COMPUTE", "UNTIL"]:
                return ast.literal_eval(node.value)[0]
    raise LookupError("lesson 04 sets no COMPUTE, UNTIL for its timeline picture")


def updates_per_epoch(n_examples, batchsize):
    """The library's rule (``dlhack.parallel.schedules``), which lesson 5's table prints."""
    from dlhack.parallel import schedules

    return schedules.updates_per_epoch(n_examples, batchsize)


def updates_in_10_epochs(ranks):
    return 10 * updates_per_epoch(20000, 32 * ranks)  # lesson 5's table: 20,000 examples, 32 a rank


def segment_mb():
    from dlhack.parallel.allreduce_ring import SEGMENT_BYTES

    return SEGMENT_BYTES / 2 ** 20


IMAGENET_TRAIN = 1_281_167  # ImageNet-1k training images
AKIBA = {"gpus": 1024, "batch": 32768, "epochs": 90, "seconds": 15 * 60}  # Akiba et al. 2017


class Fact(NamedTuple):
    lesson: str                  # "08": lessons/08_*.ipynb
    what: str                    # what the number is, for the failure message
    compute: Callable[[], Any]   # the value from its source
    quoted: Any                  # the value as the prose rounds it
    text: str                    # the phrase the prose must contain
    rel: float = 0.0             # allowed relative difference of compute() and quoted (0: equal)


FACTS = [
    # lesson 8: the alpha-beta model (beta in seconds per byte) over its table of links
    Fact("08", "4 GB ring allreduce over 10 GbE at 128 ranks (s)",
         lambda: ring_08(4e9, 128, "10 GbE, TCP"), 6.4, "about 6.4 s per allreduce", 0.02),
    Fact("08", "2 n beta for 4 GB over 10 GbE (s)",
         lambda: 2 * 4e9 / lesson_code("08", "LINKS")["10 GbE, TCP"][1], 6.4,
         "(2 × 4 GB / 1.25 GB/s)"),
    Fact("08", "4 GB ring allreduce over NDR InfiniBand at 128 ranks (s)",
         lambda: ring_08(4e9, 128, "InfiniBand NDR"), 0.16, "over NDR InfiniBand about 0.16 s",
         0.02),
    Fact("08", "4 GB ring allreduce over H100 NVLink inside one node of 8 (ms)",
         lambda: 1e3 * ring_08(4e9, lesson_code("08", "NODE_GPUS"), "NVLink (H100, NCCL)"), 16,
         "NVLink inside one node of 8 H100s about 16 ms", 0.03),
    Fact("08", "3.1 MB ring allreduce over 100 GbE at 100 ranks (ms)",
         lambda: 1e3 * ring_08(3.1e6, 100, "100 GbE, TCP"), 6.4, "about 6.4 ms at 100 ranks", 0.02),
    Fact("08", "its latency part, 2 (N - 1) alpha (ms)",
         lambda: 1e3 * 2 * 99 * lesson_code("08", "LINKS")["100 GbE, TCP"][0], 5.9,
         "5.9 ms of it latency", 0.01),
    # lesson 8: Akiba et al. 2017, from the paper's own figures
    Fact("08", "images per GPU at batch 32k on 1,024 GPUs",
         lambda: AKIBA["batch"] / AKIBA["gpus"], 32, "32 images per GPU"),
    Fact("08", "updates in 90 epochs of ImageNet at batch 32,768",
         lambda: AKIBA["epochs"] * IMAGENET_TRAIN / AKIBA["batch"], 3500,
         "about 3,500 updates", 0.02),
    Fact("08", "seconds per update in 15 minutes",
         lambda: AKIBA["seconds"] * AKIBA["batch"] / (AKIBA["epochs"] * IMAGENET_TRAIN), 0.25,
         "one every quarter of a second", 0.05),
    # lesson 4: the timeline picture and the delayed-gradient stability bound
    Fact("04", "per-gradient compute times of the timeline picture", timeline_defaults,
         (1.0, 1.3, 2.5), "worker 2 takes 1.3 and worker 3 2.5 times as long"),
    Fact("04", "staleness of the fast workers in the timeline", lambda: simulated_staleness({0, 1}),
         (0, 3), "the fast workers' gradients are 0 to 3 updates old"),
    Fact("04", "staleness of the slow worker in the timeline", lambda: simulated_staleness({2}),
         (3, 5), "the slow worker's 3 to 5"),
    Fact("04", "largest stable eta*h at staleness 3",
         lambda: lesson_code("04", "largest_stable_step")(3), 0.45,
         "for staleness 3 (4 equal workers) it is about 0.45", 0.02),
    Fact("04", "how much smaller than without staleness",
         lambda: lesson_code("04", "largest_stable_step")(0)
         / lesson_code("04", "largest_stable_step")(3), 4.5, "about 4.5 times at `τ = 3`", 0.01),
    # lesson 5: updates of its runs, from its own EPOCHS and N_TRAIN and the library's rule
    Fact("05", "updates in 10 epochs at batch 512 and at 32",
         lambda: tuple(lesson_code("05", "EPOCHS") * updates_per_epoch(lesson_code("05", "N_TRAIN"), b)
                       for b in (512, 32)), (40, 640), "has made 40 updates instead of 640"),
    Fact("05", "updates in 10 epochs at batch 2,048",
         lambda: lesson_code("05", "EPOCHS") * updates_per_epoch(lesson_code("05", "N_TRAIN"), 2048),
         10, "At 2,048 the whole run is 10 updates"),
    # lesson 7: the idle fraction of an ideal pipeline, (N - 1) / (M + N - 1)
    Fact("07", "pipeline bubble, 2 stages, 1 micro-batch (%)", lambda: 100 * (2 - 1) / (1 + 2 - 1),
         50, "50% for N = 2, M = 1"),
    Fact("07", "pipeline bubble, 2 stages, 4 micro-batches (%)", lambda: 100 * (2 - 1) / (4 + 2 - 1),
         20, "20% with M = 4"),
    # issue 15's slips 5 and 6, fixed: the prose now says what the code computes
    Fact("05", "updates in 10 epochs at 256 ranks (lesson 5's own table)",
         lambda: updates_in_10_epochs(256), 30, "At 256 ranks the whole training is 30 updates"),
    Fact("02", "the ring's segment size, SEGMENT_BYTES (MiB)", segment_mb, 4,
         "big chunks cut into 4 MiB segments"),
]


def _id(fact):
    return f"{fact.lesson}: {fact.what}" if isinstance(fact, Fact) else None


@pytest.mark.parametrize("fact", FACTS, ids=_id)
def test_prose_quotes_the_computed_value(fact):
    value = fact.compute()
    if fact.rel:
        assert math.isclose(value, fact.quoted, rel_tol=fact.rel), (
            f"lesson {fact.lesson}, {fact.what}: the source gives {value:.4g}, the prose rounds it "
            f"to {fact.quoted}: update the prose (and this row's quoted value)")
    else:
        assert value == fact.quoted, (
            f"lesson {fact.lesson}, {fact.what}: the source gives {value}, the row expects "
            f"{fact.quoted}: update the prose (and this row)")
    assert fact.text in prose(fact.lesson), (
        f"lesson {fact.lesson} does not say {fact.text!r} ({fact.what} = {value}): the prose and "
        "its source have drifted apart")


def test_lesson_code_reads_the_lessons_own_cells():
    links = lesson_code("08", "LINKS")
    assert links["10 GbE, TCP"] == (30e-6, 1.25e9)
    ring = lesson_code("08", "ring_allreduce_s")
    # lesson 2's convention: beta in seconds per byte; at 2 ranks T = 2 alpha + n beta
    assert math.isclose(ring(1e6, 2, 1e-6, 1e-9), 2e-6 + 1e-3)
    with pytest.raises(LookupError):
        lesson_code("08", "no_such_name")
