"""Writing a file whole or not at all (dlhack.atomic): what a reader finds, when the write
succeeds and when it fails half way."""
import json
import os

import pytest

from dlhack.atomic import write_bytes, write_json


def test_write_json_makes_the_folder_and_keeps_non_ascii(tmp_path):
    path = write_json(tmp_path / "a" / "b" / "metrics.json", {"bleu": 12.5, "ja": "翻訳"})
    assert json.loads(path.read_text(encoding="utf-8")) == {"bleu": 12.5, "ja": "翻訳"}
    assert "翻訳" in path.read_text(encoding="utf-8")
    assert os.listdir(path.parent) == ["metrics.json"]  # no temporary file beside it


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path, monkeypatch):
    path = write_bytes(tmp_path / "snapshot", b"old")

    def crash(src, dst):
        raise OSError("disk full")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError, match="disk full"):
        write_bytes(path, b"new")
    assert path.read_bytes() == b"old"
    assert os.listdir(tmp_path) == ["snapshot"]
