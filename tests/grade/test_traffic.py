"""grade/traffic.py: one test's part of a rank's shim log, read line by line; anything the shim
never writes (or a test whose end mark is missing) is an error, not traffic."""
import pickle

import numpy as np
import pytest

from dlhack.grade import traffic
from dlhack.grade.traffic import TrafficError


def log(tmp_path, lines, rank=0):
    (tmp_path / f"traffic.{rank}").write_text("".join(line + "\n" for line in
                                                      [f"H 123 {rank} 2 4096", *lines]))


def test_a_tests_lines_between_its_marks(tmp_path):
    start, end = traffic.marks(1)
    head = pickle.dumps(np.arange(3.0), protocol=5)
    log(tmp_path, ["S Send 0x4 1 1 0 99 8 -", f"P {start}", "P 7",
                   "S Send_c 0x44000000 1 1 0 12 8 00", f"S Send 0x4 1 1 5 {len(head)} 1 {head.hex()}",
                   "V Recv 0x4 1 1 0 12 8", "C Allreduce_c 0x44000000 3 8", "T Start 1",
                   f"P {end}", "S Send 0x4 1 1 0 99 8 -"])
    t = traffic.read(tmp_path, 0, 1)
    assert [(m.kind, m.dest, m.count, m.nbytes) for m in t.sends] == [
        ("Send_c", 1, 12, 96), ("Send", 1, len(head), len(head))]
    assert not t.sends[0].pickled and t.sends[1].pickled and t.sends[1].data_bytes() == 24
    assert [c.kind for c in t.collectives] == ["Allreduce_c"] and t.starts == 1
    assert t.receives[0].peer == 1 and not t.overflow


@pytest.mark.parametrize("lines, kind", [
    ([], "unfinished"), (["P 1001", "S Send 1 2"], "garbled"), (["P 1001", "X"], "garbled"),
    (["P 1001", "S Send 0x4 1 1 0 1 8 zz", "P 1002"], "garbled")])
def test_what_the_shim_never_writes_is_an_error(tmp_path, lines, kind):
    log(tmp_path, lines)
    with pytest.raises(TrafficError) as err:
        traffic.read(tmp_path, 0, 0)
    assert err.value.kind == kind


def test_a_missing_file_or_anothers_header(tmp_path):
    with pytest.raises(TrafficError, match="no traffic file"):
        traffic.read(tmp_path, 0, 0)
    log(tmp_path, ["P 1001", "P 1002"], rank=1)
    (tmp_path / "traffic.0").write_bytes((tmp_path / "traffic.1").read_bytes())
    with pytest.raises(TrafficError, match="no header of its own"):
        traffic.read(tmp_path, 0, 0)
