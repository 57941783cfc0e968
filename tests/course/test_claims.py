"""A claim is its output: what a lesson (or its mentor's guide) says it measured, the committed
render must show.

Each row of ``CLAIMS`` ties words of the prose to a line of the lesson's render. ``output`` is
a regular expression with named groups, searched in the render's ``verdict:`` lines (or in
every output line, with ``verdict=False``); ``holds`` gets the groups (numbers as floats) and
says whether the claim is true of that line; ``prose`` are the words in the lesson that make
the claim, ``guide`` (optional) the words in ``mentors/NN_*.md``. A row fails when the render
has no such line, when the line contradicts the claim, or when the words are gone (then the row
is stale: delete it with the claim). Every ``verdict:`` line of a current render must be held
by some row. To tie a new claim: make the cell print ``verdict: ...`` with the measured
figures, write prose that points at the verdict rather than restating its number, and add a
row here. Rows about verdicts that an old render lacks are strict xfails until `make lessons`.
"""
import re
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import nbformat
import pytest

from tests.course.lessontext import (
    NUMBERS,
    ROOT,
    notebook,
    old_render,
    output_lines,
    prose,
    verdicts,
)


class Claim(NamedTuple):
    lesson: str                       # "02": lessons/02_*.ipynb
    what: str                         # the claim in a few words, for the failure message
    output: str                       # a regex with named groups, searched in the render
    holds: Callable[[dict], bool]     # on the groups (floats where they parse)
    prose: str                        # the words in the lesson that make the claim
    guide: str | None = None          # the words in mentors/NN_*.md, if the guide makes it too
    verdict: bool = True              # search only `verdict:` lines


F = r"(?P<{}>[-+\d.e]+)"  # a number group: F.format("x")


def words_follow_ratio(v):
    """A 2-rank verdict of lesson 6: its word matches its ratio (the bands of
    ``profiled.speedup_verdict``, at the printed rounding), its efficiency is the ratio over 2,
    and "costs efficiency only" is said exactly where broken code still beats one process."""
    bands = {"slower": (0, 0.95), "no faster": (0.95, 1.05), "faster": (1.05, float("inf"))}
    low, high = bands[v["word"]]
    only = v["code"] == "broken" and v["word"] == "faster"
    return (low <= v["x"] <= high and abs(v["e"] - v["x"] / 2) <= 0.01
            and only == ("costs efficiency only" in v["rest"]))


CLAIMS = [
    # lesson 1: the fast LSTM, and what the full-size run reaches
    Claim("01", "the course's LSTM is several times faster, with the same gradients",
          rf"speed-up {F.format('x')}x; largest gradient difference {F.format('d')}",
          lambda v: v["x"] >= 2 and v["d"] < 1e-5, "several times faster", verdict=False),
    Claim("01", "most short sentences come out right at full size",
          rf"test BLEU {F.format('bleu')} after", lambda v: v["bleu"] > 50,
          "most short sentences come out right", verdict=False),
    # lesson 2: the root against the ring, MPI's page faults, one packed buffer
    Claim("02", "through a root is slower than the ring for big messages",
          rf"verdict: naive/ring at \d+ MB: {F.format('r')} .*the root is (?P<word>\w+)",
          lambda v: v["r"] > 1 and v["word"] == "slower", "The verdict line above gives this run's ratio"),
    Claim("02", "MPI's Allreduce faults in a fresh buffer at the largest size; the ring does not",
          rf"verdict: default malloc: at 64 MB .* {F.format('x')}x the ring's time, with "
          rf"{F.format('faults')} page faults a call \(the ring {F.format('ring')}\)",
          lambda v: v["faults"] > 1000 and v["ring"] == 0, "each of its 4 KB pages then costs a page fault",
          guide="MPI's Allreduce faults in a fresh temporary buffer every call, and the ring does not"),
    Claim("02", "with memory kept the faults vanish",
          rf"verdict: memory kept: at \d+ MB .* with {F.format('faults')} page faults",
          lambda v: v["faults"] == 0, "they vanish"),
    Claim("02", "packing the gradients into one allreduce saves time",
          rf"verdict: packing saved {F.format('ms')} ms per step \({F.format('x')}x\)",
          lambda v: v["x"] > 1, "one per array, instead of one"),
    # lesson 3: one allreduce against one per array; the speed-up with and without the dev set
    Claim("03", "ChainerMN's naive communicator allreduces each parameter array on its own",
          rf"verdict: chainermn:naive averaged {F.format('n')} gradient arrays with "
          rf"{F.format('calls')} MPI_Allreduce",
          lambda v: v["calls"] == v["n"] > 1, "`naive` calls `MPI_Allreduce` once per parameter array"),
    Claim("03", "dlhack.parallel packs every gradient into one allreduce",
          rf"verdict: dlhack.parallel averaged {F.format('n')} gradient arrays with "
          rf"{F.format('calls')} MPI_Allreduce", lambda v: v["calls"] == 1,
          "one allreduce of every gradient packed into one buffer"),
    Claim("03", "the split dev set raises the counted speed-up of both libraries",
          rf"verdict: at 2 ranks, with the dev set split over the ranks: ChainerMN {F.format('c')}x, "
          rf"dlhack.parallel {F.format('d')}x; training steps alone: ChainerMN {F.format('c0')}x, "
          rf"dlhack.parallel {F.format('d0')}x", lambda v: v["c"] > v["c0"] and v["d"] > v["d0"],
          "the time saved on the dev set raises the job's figure"),
    Claim("03", "each of 2 ranks scores half the dev set: its scoring is much faster",
          rf"the dev set alone: ChainerMN {F.format('c')}x, dlhack.parallel {F.format('d')}x",
          lambda v: v["c"] > 1.5 and v["d"] > 1.5, "each rank scores half of it"),
    Claim("03", "two ranks are faster than one, below the ideal",
          rf"verdict: 2 ranks {F.format('x')}x of one process, efficiency {F.format('e')}",
          lambda v: 1 < v["x"] <= 2.05, "The verdict line says how close this run came"),
    # lesson 4: sync = allreduce; staleness; the straggler; staleness against the rate
    Claim("04", "sync PS and allreduce compute the same thing",
          rf"verdict: sync PS and allreduce curves differ by at most {F.format('d')}",
          lambda v: v["d"] < 1e-6, "Sync PS and allreduce compute the same thing",
          guide="identical (the printed difference is 0 or rounding)"),
    Claim("04", "async's mean staleness is close to W - 1, and it ends higher near convergence",
          rf"mean staleness {F.format('s')} with W - 1 = {F.format('w')}; final loss async "
          rf"{F.format('a')}, sync {F.format('y')}",
          lambda v: abs(v["s"] - v["w"]) < 0.5 and v["a"] > v["y"],
          "Near convergence (the full run) async ends a little higher"),
    Claim("04", "a straggler holds sync to one update per 20 ms; async outruns it, stale",
          rf"verdict: sync made {F.format('n')} updates in {F.format('b')} s \(at most "
          rf"{F.format('most')} .*were {F.format('slow')} updates old on average, the fast "
          rf"workers' {F.format('fast')}; async reached sync's final loss after {F.format('t')} s",
          lambda v: v["n"] <= v["most"] and v["slow"] > 10 * v["fast"] and v["t"] < v["b"] / 2,
          "in a fraction of the budget"),
    Claim("04", "staleness costs little at a small rate and more at a large one; sync lowest",
          rf"verdict: async 4 workers over its control: {F.format('lo')} at lr [\d.]+, "
          rf"{F.format('hi')} at lr [\d.]+; sync lowest at every rate: (?P<sync>\w+)",
          lambda v: v["lo"] < 1.1 and v["hi"] > v["lo"] and v["sync"] == "True",
          "falls behind its control"),
    Claim("04", "at HARM_LR staleness alone makes training diverge; fresh gradients converge",
          r"verdict: at lr [\d.]+ staleness alone made training (?P<stale>\w+); the same kind of "
          r"updates, fresh, (?P<fresh>\w+)",
          lambda v: v["stale"] == "diverge" and v["fresh"] == "converged",
          "a gradient one update old is not"),
    Claim("04", "over seeds, sync and the fresh worker converge and 4 stale workers diverge",
          rf"verdict: over {F.format('n')} seeds, sync converged {F.format('sync')}/[\d.]+, the "
          rf"fresh worker {F.format('fresh')}/[\d.]+, and 4 stale workers diverged "
          rf"{F.format('stale')}/",
          lambda v: v["sync"] == v["fresh"] == v["stale"] == v["n"] and v["n"] >= 5,
          "whatever the seed"),
    # lesson 5: the drop, linear scaling, warm-up's cost, growing the batch (its printed tables)
    Claim("05", "linear scaling recovers almost all of the drop up to k = 16",
          rf"^\s+512\s+{F.format('same')}\s+{F.format('scaled')}\s+{F.format('warm')}\s+40$",
          lambda v: v["scaled"] > 0.95 and v["scaled"] - v["same"] > 0.2,
          "Linear scaling recovers almost all of it up to `k = 16`", verdict=False),
    Claim("05", "warm-up costs where updates are scarcest",
          rf"^\s+1024\s+{F.format('same')}\s+{F.format('scaled')}\s+{F.format('warm')}\s+20$",
          lambda v: v["warm"] < v["scaled"], "where updates are scarcest it costs", verdict=False),
    Claim("05", "growing the batch needs about half the updates of decaying the rate",
          rf"grow the batch at epochs 4, 7: test loss {F.format('loss')}, accuracy "
          rf"{F.format('acc')}, {F.format('u')} updates", lambda v: 0.3 < v["u"] / 640 < 0.7,
          "It gets there with about half the updates", verdict=False),
    # lesson 5, the translator: each recipe at the largest batch against one rank (one seed)
    Claim("05", "at the same rate the largest batch falls far behind one rank",
          rf"verdict: same rate, batch \d+ \(\d ranks\): dev BLEU {F.format('b')} against one "
          rf"rank's {F.format('one')}", lambda v: v["b"] < v["one"] - 5,
          "At the same rate the larger batch falls far behind"),
    Claim("05", "with the rate scaled by the ranks the largest batch reaches one rank's BLEU",
          rf"verdict: linear scaling, batch \d+ \(\d ranks\): dev BLEU {F.format('b')} against "
          rf"one rank's {F.format('one')}", lambda v: v["b"] >= v["one"] - 2,
          "it reaches at least one rank's BLEU"),
    Claim("05", "with the rate scaled and warmed up the largest batch reaches one rank's BLEU",
          rf"verdict: linear scaling \+ warm-up, batch \d+ \(\d ranks\): dev BLEU "
          rf"{F.format('b')} against one rank's {F.format('one')}",
          lambda v: v["b"] >= v["one"] - 2, "with warm-up or without, it reaches"),
    Claim("05", "adding a rank instead of halving the rate: half the updates, within a few BLEU "
          "of the decay, in less wall time",
          rf"verdict: adding a rank instead of halving the rate: dev BLEU {F.format('g')} against "
          rf"{F.format('d')} \(.*\); in the second phase {F.format('ug')} updates against "
          rf"{F.format('ud')}, \d+ s against \d+ s \({F.format('x')}x the wall time\)",
          lambda v: 2 * v["ug"] == v["ud"] and abs(v["g"] - v["d"]) < 5 and v["x"] < 1,
          "It ends within a few BLEU of the decayed run", guide="half the updates, always"),
    # lesson 6: one process beside the ranks; an error on some ranks only; slower in parallel
    Claim("06", "an error that every rank reports happens in one process too",
          rf"verdict: 00_every_rank_broken\.py: one process (?P<alone>\w+); {F.format('k')} of "
          rf"{F.format('n')} ranks report", lambda v: v["alone"] == "fails" and v["k"] == v["n"],
          "as many reports as ranks", guide="fails in one process too and on 2 of 2 ranks"),
    Claim("06", "an error that some ranks report hides in one process",
          rf"verdict: 03_one_rank_raises_broken\.py: one process (?P<alone>\w+); "
          rf"{F.format('k')} of {F.format('n')} ranks report",
          lambda v: v["alone"] == "runs" and 0 < v["k"] < v["n"], "In one process it hides",
          guide="runs in one process and fails on 1 of 2 ranks"),
    Claim("06", "the device bug fails on one rank of two, whichever loses the race",
          rf"verdict: this time rank \d lost the race for GPU 0: {F.format('k')} of "
          rf"{F.format('n')} ranks failed", lambda v: v["k"] == 1 and v["n"] == 2,
          "**on one rank only (1 of 2)**", guide="whichever rank lost the race for GPU 0"),
    Claim("06", "each 2-rank verdict's words follow its ratio to one process",
          rf"verdict: \w+, (?P<code>broken|fixed), [^:]+: {F.format('x')}x of one process, "
          rf"efficiency {F.format('e')}: (?P<word>slower|no faster|faster) than one "
          rf"process(?P<rest>.*)", words_follow_ratio,
          "says *slower than one process*, *no faster*, or *faster*"),
    Claim("06", "the threads' cost is shown, not claimed: it depends on the load",
          rf"verdict: 06_threads, 2 ranks: the broken code runs at {F.format('x')}x",
          lambda v: v["x"] > 0, "How much the extra threads cost is not fixed"),
    Claim("06", "the profile names oversubscribed threads from the thread count",
          rf"verdict: 06_threads, broken, 2 ranks: .*Threads are oversubscribed: {F.format('r')} "
          rf"ranks x {F.format('t')} BLAS threads on {F.format('c')} cores",
          lambda v: v["r"] * v["t"] > v["c"], "names the cause from the same count"),
    Claim("06", "with a batch of 2 a rank the profile says per-step costs dominate",
          rf"verdict: 07_tiny_batch, broken, 2 ranks(, 100 Mb/s link)?: .*Per-step costs dominate "
          rf"with a per-rank batch of {F.format('b')}", lambda v: v["b"] == 2, "three costs do not"),
    Claim("06", "the fixed batch (32 a rank) is faster than the broken one (2 a rank)",
          rf"verdict: 07_tiny_batch, 2 ranks(, 100 Mb/s link)?: the broken code runs at "
          rf"{F.format('x')}x", lambda v: v["x"] < 1, "spread over fewer sentences"),
    Claim("06", "over a 100 Mb/s link 2 ranks of 2 sentences are slower than one process of 4",
          rf"verdict: 07_tiny_batch, broken, 2 ranks, 100 Mb/s link: {F.format('x')}x of one "
          rf"process", lambda v: v["x"] < 0.95, "Over the link the 2 ranks are slower"),
    Claim("06", "2 ranks that each evaluate, or train on, everything at best match one process "
          "(faster only by less than a tenth, the noise)",
          rf"verdict: (08_eval_every_rank|09_whole_corpus), broken, 2 ranks: {F.format('x')}x of "
          rf"one process", lambda v: v["x"] < 1.1, "*faster* by less than a tenth: noise"),
    Claim("06", "splitting the evaluation, or the corpus, makes the 2 ranks faster",
          rf"verdict: (08_eval_every_rank|09_whole_corpus), 2 ranks: the broken code runs at "
          rf"{F.format('x')}x", lambda v: v["x"] < 1, "each rank translates its shard"),
    Claim("06", "memory given back: the profile names the kernel and its page faults",
          rf"verdict: 06_memory, memory given back: .*The kernel takes {F.format('p')}% of rank "
          rf"\d's CPU time in a step \({F.format('faults')} page faults per step\)",
          lambda v: v["faults"] > 1000, "page faults by the thousand"),
    Claim("06", "memory kept: no usual cause, and few faults",
          r"verdict: 06_memory, memory kept: (?P<rest>.*)",
          lambda v: "No usual cause" in v["rest"] and "page faults" not in v["rest"],
          "the verdict finds no usual cause"),
    Claim("06", "kept, a few dozen faults a step at most; given back, thousands",
          rf"verdict: 06_memory, page faults per step \(the last runs, the rank with most\): "
          rf"memory kept {F.format('kept')}, memory given back {F.format('given')}",
          lambda v: v["kept"] < 100 and v["given"] > 1000, "fall to a few dozen at most"),
    Claim("06", "memory given back is slower than memory kept, run for run",
          rf"verdict: 06_memory, 2 ranks: memory given back runs at {F.format('x')}x the speed",
          lambda v: v["x"] < 1, "compares the two speeds, run for run"),
    Claim("06", "the fixed empty-shard script prints the same loss at 4 ranks as alone",
          rf"dev loss {F.format('loss')} \(3 sentences, (?P<ranks>\d) ranks\)",
          lambda v: True, "prints the same loss on 4 ranks as on one process", verdict=False),
    # lesson 7: the split is exact
    Claim("07", "both splits are exact; tensor parallelism sends another amount, in other messages",
          rf"verdict: both splits are exact; the tensor-parallel step sent {F.format('x')}x the "
          rf"bytes of the layer-wise one, in {F.format('tp')} messages against {F.format('lw')}",
          lambda v: v["x"] > 0 and v["tp"] > 0 and v["lw"] > 0,
          "Both splits are exact"),
    Claim("07", "the split translator's loss is the whole one's",
          rf"loss: split {F.format('a')}, one process {F.format('b')}",
          lambda v: v["a"] == v["b"], "The losses agree to the last digit printed", verdict=False),
    Claim("07", "one cut sends less than data parallelism up to a few hundred sentences a step",
          rf"^\s+64\s+\d+\s+{F.format('fwd')} kB\s+{F.format('bwd')} kB\s+{F.format('grad')} MB",
          lambda v: 100 < 1000 * v["grad"] / ((v["fwd"] + v["bwd"]) / 64) < 1000,
          "up to a few hundred sentences per step", verdict=False),
    # lesson 9: what overlap hides over the slow link
    Claim("09", "over the slow link overlap hides part of the link's time, not most",
          rf"verdict: over the slow link, overlap hid {F.format('hid')} ms of the "
          rf"{F.format('added')} ms", lambda v: 0 < v["hid"] < v["added"] / 2,
          "It cannot be most of it here", guide="a part, at most what backward covers"),
    Claim("09", "the slow link takes longer than a whole step's computation",
          rf"verdict: the link's alpha \+ n beta, {F.format('link')} ms, is {F.format('x')}x",
          lambda v: v["x"] > 1, "the link's time is longer than a whole step of computation"),
]


def numbers(match):
    out = {}
    for key, value in match.groupdict().items():
        try:
            out[key] = float(value)
        except (TypeError, ValueError):
            out[key] = value
    return out


def check(claim, nb):
    """What is wrong with ``claim`` against notebook ``nb``: a list of messages, [] if it holds."""
    lines = [line for _, line in (verdicts(nb) if claim.verdict else output_lines(nb))]
    found = [(line, m) for line in lines if (m := re.search(claim.output, line))]
    problems = []
    if not found:
        problems.append(f"lesson {claim.lesson}: no {'verdict ' if claim.verdict else ''}line of "
                        f"the render matches {claim.output!r} ({claim.what}): re-render, or "
                        "make the cell print it")
    for line, match in found:
        if not claim.holds(numbers(match)):
            problems.append(f"lesson {claim.lesson} claims {claim.what}, but its render prints: "
                            f"{line}")
    if claim.prose not in prose(nb):
        problems.append(f"lesson {claim.lesson} no longer says {claim.prose!r}: delete or "
                        "update this row")
    return problems


def guide_text(lesson):
    (path,) = (ROOT / "mentors").glob(f"{lesson}_*.md")
    return re.sub(r"\s+", " ", path.read_text(encoding="utf-8"))


def marks(claim):
    return [pytest.mark.xfail(strict=True, reason=f"lesson {claim.lesson}'s committed render "
                              "predates its verdict lines: passes after `make lessons`")
            ] if claim.verdict and old_render(claim.lesson) else []


@pytest.mark.parametrize("claim", [pytest.param(c, marks=marks(c), id=f"{c.lesson}: {c.what}")
                                   for c in CLAIMS])
def test_the_render_shows_what_the_prose_claims(claim):
    problems = check(claim, notebook(claim.lesson))
    if claim.guide:
        assert claim.guide in guide_text(claim.lesson), f"the guide no longer says {claim.guide!r}"
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("number", NUMBERS)
def test_every_verdict_is_held_by_a_claim(number):
    mine = [c.output for c in CLAIMS if c.lesson == number and c.verdict]
    loose = [line for _, line in verdicts(notebook(number))
             if not any(re.search(pattern, line) for pattern in mine)]
    if loose and old_render(number):
        pytest.xfail(f"lesson {number}'s render predates render format 2; after `make lessons` "
                     f"its verdicts need rows: {loose[0][:80]}")
    assert not loose, (f"lesson {number} prints verdicts that no row of CLAIMS holds prose to: "
                       f"{loose}; add a row in tests/course/test_claims.py")


def spoiled(line, words):
    cell = nbformat.v4.new_code_cell("measure()")
    cell.outputs = [nbformat.v4.new_output("stream", name="stdout", text=f"[0] {line}\n")]
    return nbformat.v4.new_notebook(cells=[nbformat.v4.new_markdown_cell(words), cell])


def test_a_contradicting_render_fails_its_claim():
    claim = next(c for c in CLAIMS if c.what.startswith("over the slow link"))
    good = spoiled("verdict: over the slow link, overlap hid 30.6 ms of the 145.1 ms the link",
                   claim.prose)
    assert check(claim, good) == []
    most = spoiled("verdict: over the slow link, overlap hid 130.6 ms of the 145.1 ms", claim.prose)
    assert "but its render prints" in check(claim, most)[0]
    silent = spoiled("overlap hid 30.6 ms of the 145.1 ms", claim.prose)  # no verdict: prefix
    assert "no verdict line" in check(claim, silent)[0]
    reworded = spoiled(good.cells[1].outputs[0]["text"][4:], "It hides most of it.")
    assert "no longer says" in check(claim, reworded)[0]


def test_claims_name_real_lessons_and_compile():
    for claim in CLAIMS:
        assert claim.lesson in NUMBERS, claim
        assert re.compile(claim.output).groupindex, f"{claim.what}: name the groups it reads"
        assert Path(ROOT / "lessons").glob(f"{claim.lesson}_*.ipynb")
