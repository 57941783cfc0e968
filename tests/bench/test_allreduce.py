"""``dlhack bench allreduce`` runs both ways its docstring shows, on tiny messages."""
import json

import pytest

from dlhack.bench import allreduce as bench

TINY = ["--sizes", "4K", "3000", "--repeat", "2", "--warmup", "0"]


def test_parse_size_and_strip_options():
    sizes = [bench.parse_size(s) for s in ("4K", "64M", "1000", "2kb")]
    assert sizes == [4096, 1 << 26, 1000, 2048]
    argv = ["-s", "4K", "1M", "--ranks", "1", "2", "--json=x.json", "-r", "3"]
    assert bench.strip_options(argv, ("-n", "--ranks", "-j", "--json")) == ["-s", "4K", "1M",
                                                                            "-r", "3"]


def test_launches_mpiexec_per_rank_count(tmp_path, capsys):
    out = tmp_path / "allreduce.json"
    assert bench.main([*TINY, "--ranks", "1", "2", "--json", str(out)]) == 0
    rows = json.loads(out.read_text())["rows"]
    assert {(r["ranks"], r["algorithm"]) for r in rows} == {
        (p, a) for p in (1, 2) for a in ("copy", "naive", "ring", "mpi")}
    assert all(r["median_s"] > 0 for r in rows)


@pytest.mark.mpi(ranks=[2], timeout=60)
def test_runs_under_mpiexec(mpi_tmp_path, capsys):
    from mpi4py import MPI

    out = mpi_tmp_path / "allreduce.json"
    bench.main([*TINY, "--algorithms", "ring", "chainermn", "--json", str(out)])
    printed = capsys.readouterr().out
    MPI.COMM_WORLD.Barrier()  # rank 0 has written the file
    rows = json.loads(out.read_text())["rows"]
    if MPI.COMM_WORLD.rank == 0:
        assert "MPI library" in printed and "busbw" in printed
    else:
        assert printed == ""  # only rank 0 prints
    assert [(r["bytes"], r["algorithm"]) for r in rows] == [
        (b, a) for b in (4096, 3000) for a in ("copy", "ring", "chainermn")]
