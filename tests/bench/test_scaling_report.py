"""``dlhack bench scaling``'s report (dlhack.bench.scaling_report): every repeat against its own
ceiling, the wait under each run, and the phases and the wait compared repeat by repeat with the
ceiling and the machine's floor."""
import pytest

from dlhack.bench.scaling import parse_args
from dlhack.bench.scaling_report import (
    against_ceiling,
    paired_phases,
    print_report,
    print_waits,
    waits_against_floor,
)
from dlhack.step_profile import PHASES


def test_the_report_gives_the_median_steps_wait_under_each_run_of_two_ranks(capsys):
    def run(*waits):
        ranks = [{"rank": r, "threads": 1, "wait_median_ms": w / 10,
                  "ms": {"data": 0.4, "forward": 15.0, "backward": 18.0, "wait": w,
                         "allreduce": 1.0, "optimizer": 0.9}} for r, w in enumerate(waits)]
        return {"median": 3000.0, "efficiency": 0.97, "profile": {"ranks": ranks},
                "verdict": "no usual cause"}

    args = parse_args(["--overlap"])
    tables = {"results": {"1": run(0.0), "2": run(0.2, 1.5)}, "overlap": {"2": run(0.0, 0.0)},
              "ceiling": {"2": run(0.0, 0.0)}, "gc_off": {}, "other": {}, "whole": {},
              "given_back": {}, "speed": {}}
    print_report(args, tables)
    out = capsys.readouterr().out
    assert "rank 0 0.02 and 0.20 ms, rank 1 0.15 and 1.50 ms" in out
    assert out.count("wait per step, median step and mean") == 2  # 2 ranks, and overlapped


def test_each_repeat_is_set_against_the_ceiling_of_its_own_repeat(capsys):
    def runs(*speeds):
        return [{"sentences_per_sec": s} for s in speeds]

    def table(speeds):
        ranks = [{"rank": r, "threads": 1, "wait_median_ms": 0.0,
                  "ms": {"data": 0.4, "forward": 15.0, "backward": 18.0, "wait": 0.0,
                         "allreduce": 1.0, "optimizer": 0.9}} for r in range(2)]
        return {"runs": runs(*speeds), "median": sorted(speeds)[len(speeds) // 2],
                "efficiency": 0.9, "profile": {"ranks": ranks}, "verdict": "no usual cause"}

    # the third repeat ran in a slow spell: slow for both, so its ratio is still high
    tables = {"results": {"1": table([100, 100, 60]), "2": table([190, 196, 114])},
              "ceiling": {"2": table([200, 200, 120])}, "overlap": {"2": table([180, 200, 96])},
              "gc_off": {}, "other": {}, "whole": {}, "given_back": {}, "speed": {}}
    against_ceiling(tables)
    two = tables["results"]["2"]
    assert two["of_ceiling_repeats"] == [0.95, 0.98, 0.95]
    assert two["of_ceiling"] == 0.95
    assert tables["overlap"]["2"]["of_ceiling_repeats"] == [0.9, 1.0, 0.8]
    assert two["overlap_of_ceiling"] == 0.9
    print_report(parse_args(["--overlap"]), tables)
    out = capsys.readouterr().out
    assert "0.950   (per repeat: 0.950, 0.980, 0.950)" in out
    assert "(per repeat: 0.900, 1.000, 0.800)" in out


def test_phases_are_set_against_the_ceiling_of_the_same_repeat(capsys):
    """Slow spells move whole repeats: the k-rank forward is 1 ms longer than its ceiling's in
    two repeats of three, which the median runs' tables (20.0 against 19.5) would hide."""
    def run(forward, wait, spread=0.0):
        ms = dict.fromkeys(PHASES, 1.0)
        ranks = [{"rank": r, "threads": 1, "wait_median_ms": 0.0,
                  "ms": {**ms, "forward": forward + sign * spread, "wait": wait}}
                 for r, sign in enumerate((-1, 1))]
        return {"sentences_per_sec": 1000 / forward, "profile": {"ranks": ranks}}

    def table(runs):
        middle = sorted(runs, key=lambda r: r["sentences_per_sec"])[1]
        return {"runs": runs, "median": middle["sentences_per_sec"], "efficiency": 0.9,
                "profile": middle["profile"], "verdict": "no usual cause"}

    ranks = [run(15.0, 0.5, spread=0.2), run(20.0, 1.0, spread=0.4), run(25.0, 0.2)]
    alone = [run(14.0, 0.0), run(19.5, 0.0), run(24.0, 0.0)]
    tables = {"results": {"1": table([run(14.0, 0.0)] * 3), "2": table(ranks)},
              "ceiling": {"2": table(alone)}, "overlap": {}, "gc_off": {}, "other": {},
              "whole": {}, "given_back": {},
              "speed": {"2": table([run(14.5, 0.1), run(19.5, 0.3), run(24.0, 0.2)])}}
    against_ceiling(tables)
    paired_phases(tables)
    paired = tables["results"]["2"]["paired_ms"]
    assert paired["forward"] == pytest.approx(1.0)  # differences 1.0, 0.5, 1.0
    assert paired["wait"] == pytest.approx(0.5) and paired["backward"] == pytest.approx(0.0)
    assert paired["step"] == pytest.approx(1.5)  # 1.5, 1.5, 1.2
    assert paired["ceiling_step"] == pytest.approx(23.5)  # 18.0, 23.5, 28.0
    assert "1" not in tables["ceiling"] and "paired_ms" not in tables["results"]["1"]
    speed = tables["speed"]["2"]["paired_ms"]  # a variant, against the same ceiling runs
    assert speed["forward"] == pytest.approx(0.0) and speed["wait"] == pytest.approx(0.2)
    print_report(parse_args(["--compare-speed"]), tables)
    out = capsys.readouterr().out
    assert ("2 rank(s) against the ceiling of the same repeat, ms per step (median of the "
            "repeats' differences):\n         2 rank(s): data +0.0, forward +1.0, backward "
            "+0.0, wait +0.5, allreduce +0.0, optimizer +0.0; the step +1.5 ms of 23.5 "
            "(+6.4%)\n      speed shares: data +0.0, forward +0.0") in out


def test_the_wait_is_set_against_the_floor_of_the_same_repeat(capsys):
    """The floor's equal products wait too: each run's wait share less the floor's of its own
    repeat. Unpaired (the median run less the median floor), the plain run would be 1 point
    beyond the floor, not 0.5."""
    def run(*waits):  # every rank's phases add up to a 40 ms step
        ranks = [{"rank": r, "ms": {**dict.fromkeys(PHASES, 1.0), "data": 0.0, "forward": 18.0,
                                    "backward": 20.0 - w, "wait": w}}
                 for r, w in enumerate(waits)]
        return {"profile": {"ranks": ranks}}

    tables = {"results": {"2": {"runs": [run(0.8, 1.6), run(1.2, 2.8), run(0.4, 1.2)]}},
              "speed": {"2": {"runs": [run(0.4, 0.4)] * 3}}, "overlap": {}, "gc_off": {},
              "other": {}, "whole": {}, "given_back": {}}
    floors = [{"step_ms": 50.0, "wait_ms": w} for w in ([1.0, 1.5], [0.5, 1.5], [0.5, 1.0])]
    waits = waits_against_floor(tables, "2", floors)
    assert waits["floor"] == pytest.approx((0.02, 0.03))  # means 2.5, 2, 1.5%; most 3, 3, 2%
    plain = waits["results"]  # means 3, 5, 2%; most 4, 7, 3%
    assert (plain["mean"], plain["most"]) == pytest.approx((0.03, 0.04))
    assert plain["beyond"] == pytest.approx(0.005)  # 0.5, 3, 0.5 points
    assert waits["speed"]["beyond"] == pytest.approx(-0.01)  # 1% against 2.5, 2, 1.5%
    print_waits("2", waits)
    out = capsys.readouterr().out
    assert ("the floor: 2.0% (3.0%)\n         2 rank(s): 3.0% (4.0%); beyond the floor of "
            "its repeat, +0.5 points\n      speed shares: 1.0% (1.0%); beyond the floor of its "
            "repeat, -1.0 points") in out
