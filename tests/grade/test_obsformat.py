"""grade/obsformat.py: what a rank observed, written and read back without pickle; a file that
learner code wrote or changed only fails to read."""
import struct

import numpy as np
import pytest

from dlhack.grade import obsformat
from dlhack.grade.obsformat import Foreign, ObservationError, Omitted


def test_plain_values_and_arrays_come_back_as_written(tmp_path):
    values = {"got": np.arange(6, dtype=np.float32).reshape(2, 3), "n": 3, "ok": True,
              "name": "ring", "none": None, "xs": [1.5, (2, 3)], "d": {"a": np.int64(4)},
              "big_endian": np.arange(3, dtype=">i4"), "empty": np.zeros((0, 2))}
    obsformat.write(tmp_path / "obs", values)
    back = obsformat.read(tmp_path / "obs")
    assert back["got"].dtype == np.float32 and np.array_equal(back["got"], values["got"])
    assert (back["n"], back["ok"], back["name"], back["none"]) == (3, True, "ring", None)
    assert back["xs"] == [1.5, [2, 3]]
    assert back["d"]["a"].shape == () and int(back["d"]["a"]) == 4
    assert np.array_equal(back["big_endian"], [0, 1, 2]) and back["empty"].shape == (0, 2)


def test_other_types_are_named_and_big_ones_left_out(tmp_path):
    obsformat.write(tmp_path / "obs", {"obj": object(), "objs": np.array([None]),
                                       "huge": np.zeros(100)}, budget=80)
    back = obsformat.read(tmp_path / "obs")
    assert back["obj"] == Foreign("object") and isinstance(back["objs"], Foreign)
    assert isinstance(back["huge"], Omitted) and "over the grader's budget" in back["huge"].why


def frame(header, body=b""):
    return obsformat.MAGIC + struct.pack("<Q", len(header)) + header + body


@pytest.mark.parametrize("data", [
    b"", b"not ours", frame(b'{"d": {}')[:-1], frame(b"[1]"), frame(b'{"d": {"x": {"p": 1}}}'),
    frame(b'{"d": {"x": {"a": [0, "<f8", [4]]}}}', b"\0" * 8),           # cut short
    frame(b'{"d": {"x": {"a": [0, "|O", [1]]}}}', b"\0" * 8),            # object dtype
    frame(b'{"d": {"x": {"a": [1, "<f8", [1]]}}}', b"\0" * 8),           # wrong index
    frame(b'{"d": {}}', b"extra"), frame(b"{" * 100000)])
def test_a_file_the_grader_did_not_write_does_not_read(tmp_path, data):
    (tmp_path / "obs").write_bytes(data)
    with pytest.raises(ObservationError):
        obsformat.read(tmp_path / "obs")


def test_a_file_over_the_limit_is_not_read(tmp_path):
    (tmp_path / "obs").write_bytes(frame(b'{"d": {}}') + b"\0" * 2000)
    with pytest.raises(ObservationError, match="more than"):
        obsformat.read(tmp_path / "obs", limit=1000)
