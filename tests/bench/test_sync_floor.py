"""The machine's own floor (dlhack.bench.sync_floor): equal work with a barrier after every
step against the same work without, on the same processes, block by block."""
import json
import time

import pytest

from dlhack.bench import sync_floor


def test_ratios_add_up_the_ranks_of_each_block():
    # block 0: two ranks in step; block 1: rank 1 half as fast, so the barrier holds rank 0
    synchronous = [[10.0, 10.0], [5.0, 5.0]]
    alone = [[10.0, 10.0], [10.0, 5.0]]
    assert sync_floor.ratios(synchronous, alone) == [1.0, pytest.approx(10 / 15)]
    with pytest.raises(ValueError):
        sync_floor.ratios(synchronous, alone[:1])


def test_report_prints_each_repeat_beside_the_run(capsys):
    floors = [{"of_alone": 0.95}, {"of_alone": 0.99}, {"of_alone": 0.97}]
    kept = sync_floor.report(floors, 0.96, 2)
    line = capsys.readouterr().out
    assert "0.970 of their speed without (per repeat: 0.950, 0.990, 0.970)" in line
    assert "the 2-rank run: 0.960 of its ceiling" in line
    assert kept["of_alone"] == 0.97 and kept["repeats"] is floors
    sync_floor.report(floors, None, 2)
    assert "ceiling" not in capsys.readouterr().out


def sleeper(ms):
    return lambda: time.sleep(ms / 1000)


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_a_slower_rank_costs_the_synchronous_blocks_only(mpi_comm):
    """Rank 1 takes twice as long a step: alone the two make 1.5 times rank 0's steps, held
    together 1 time, so the floor is 2/3, and rank 0 waits about a step of its own; with the
    same step on both ranks the floor is about 1. Steps of 20 ms, not a few: the suite keeps
    both cores busy, and waking from a barrier late by a millisecond is 20% of a 5 ms step."""
    uneven = sync_floor.measure(sleeper(40 if mpi_comm.rank else 20), 6, 2, mpi_comm)
    assert len(uneven["of_alone_blocks"]) == 2
    assert 0.5 < uneven["of_alone"] < 0.8
    assert uneven["wait_ms"][0] > 12.0 and uneven["wait_ms"][1] < uneven["wait_ms"][0]
    even = sync_floor.measure(sleeper(20), 6, 2, mpi_comm)
    assert even["of_alone"] > 0.85 and even["of_alone"] > uneven["of_alone"] + 0.1
    assert 16 < even["step_ms"] < 60


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_products_give_every_rank_rank_0s_count_for_the_step_asked(mpi_comm, monkeypatch):
    """A product takes 1 ms on rank 0 and 2 ms on rank 1 (timed, not measured: a busy machine
    would move the counts): every rank runs rank 0's count, the step over its time."""
    monkeypatch.setattr(sync_floor, "sgemm_seconds",
                        lambda *shape: 0.001 * (1 + mpi_comm.rank))
    _, short = sync_floor.products(5.0, mpi_comm)
    work, long = sync_floor.products(20.0, mpi_comm)
    assert (short, long) == (5, 20)
    assert sync_floor.products(0.1, mpi_comm)[1] == 1  # at least one product a step
    work()


def test_dlhack_bench_floor_starts_its_ranks_and_writes_the_json(tmp_path, capsys):
    from dlhack.bench import main

    out = tmp_path / "floor.json"
    assert main(["floor", "--ranks", "2", "--step-ms", "3", "--steps", "3", "--blocks", "1",
                 "--out", str(out)]) == 0
    floor = json.loads(out.read_text())
    assert len(floor["of_alone_blocks"]) == 1 and len(floor["wait_ms"]) == 2
    assert floor["products"] >= 1
    assert "2 processes, equal matrix products in steps of" in capsys.readouterr().out
