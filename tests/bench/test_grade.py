"""``dlhack bench grade`` on the quickest lab: it times every exercise cold and warm and the
whole lab, writes its JSON and plot, and refuses to time a grade that is not full marks."""
import json

from dlhack.bench import grade as bench


def test_bench_grade_times_every_exercise_and_the_lab(tmp_path, capsys):
    assert bench.main(["--lab", "05_large_batch", "--repeats", "1", "--out", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    saved = json.loads((tmp_path / "grade.json").read_text())["results"]["05_large_batch"]
    assert set(saved["exercises"]) == {"warmup_lr", "warmup_extension", "batch_growth_extension"}
    for name, row in saved["exercises"].items():
        assert len(row["cold"]) == len(row["warm"]) == 1 and min(row["cold"] + row["warm"]) > 0
        assert name in out
    assert len(saved["lab"]) == 1 and "(whole lab)" in out
    assert (tmp_path / "grade.png").stat().st_size > 1000


def test_only_full_marks_count():
    assert bench.full_marks({"status": "graded", "score": 8.0, "max_score": 8.0})
    assert not bench.full_marks({"status": "graded", "score": 7.0, "max_score": 8.0})
    assert not bench.full_marks({"status": "incomplete", "score": 8.0, "max_score": 8.0})
