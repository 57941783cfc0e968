"""``dlhack bench model`` end to end, at its smallest: every row, the table, the JSON."""
import json

from dlhack.bench import model as bench_model
from dlhack.model.ckernels import describe

FAKE_OFFICIAL = '''
from dlhack.model.seq2seq import Seq2seq as Ours


class Seq2seq(Ours):  # stands in for Chainer's example: the same constructor arguments
    def __init__(self, n_layers, n_source_vocab, n_target_vocab, n_units):
        super().__init__(n_source_vocab, n_target_vocab, n_units=n_units, n_layers=n_layers,
                         attention=False)
'''


def test_bench_model_prints_fraction_of_sgemm_for_each_row(tmp_path, capsys, monkeypatch):
    for name in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS"):
        monkeypatch.setenv(name, "3")  # a shell that asked for more: the workers still get one
    official = tmp_path / "seq2seq.py"
    official.write_text(FAKE_OFFICIAL)
    out = tmp_path / "model.json"
    monkeypatch.delenv("DLHACK_KERNELS", raising=False)
    assert bench_model.main(["--sizes", "demo", "--attention", "off", "-i", "1", "-r", "1",
                             "--impls", "readable", "fused", "fused-numpy",
                             "--official", str(official), "--json", str(out)]) == 0
    text = capsys.readouterr().out
    assert "of sgemm" in text and "fused/official" in text and "BLAS in the workers" in text
    runs = json.loads(out.read_text())["results"]["demo"]
    assert set(runs) == {"readable", "fused", "fused-numpy", "official"}
    # which elementwise path each fused row ran, in the JSON and in the table
    assert runs["fused"][0]["elementwise"] == describe()
    assert runs["fused-numpy"][0]["elementwise"] == "numpy (forced by DLHACK_KERNELS=numpy)"
    assert f"elementwise: {describe()}" in text and "fused/fused-numpy" in text
    assert "GEMM hot" in text
    for rows in runs.values():
        run = rows[0]
        # one BLAS thread per worker: "openblas 0.3.23 Haswell, 1 thread(s)" for each BLAS
        assert all(b.endswith(", 1 thread(s)") for b in run["blas"].split("; ")), run["blas"]
        assert 0 < bench_model.fraction(run)  # a ratio of two timings: no upper bound under load
        assert run["executed_flops"] >= run["useful_flops"] > 0
        assert run["phases"]["step"]["gemm_ms"] <= run["phases"]["step"]["ms"]
        assert run["phases"]["step"]["hot_ms"] > 0  # the products at the sgemm rate
    # the fused model computes no padding; the readable one does
    assert runs["fused"][0]["executed_flops"] == runs["fused"][0]["useful_flops"]
    assert runs["readable"][0]["executed_flops"] == runs["readable"][0]["padded_flops"]


def test_a_ratio_to_nothing_is_not_a_number():
    """A run too short to grow its memory has 0 MB of training memory: no ratio, no crash."""
    assert bench_model.ratio(3.0, 2.0) == 1.5
    assert bench_model.ratio(3.0, 0) != bench_model.ratio(3.0, 0)  # nan
