"""Write a file so that a reader never sees half of it: into a temporary file, then rename.

    write_json("result/train/metrics.json", metrics)

``os.replace`` within one folder is atomic on POSIX: a reader (or a rank that resumes after a
kill) sees the old file or the new one, never a torn one. Used for metrics, snapshots and grades.
"""
import json
import os
from pathlib import Path


def write_bytes(path, data):
    """Write ``data`` to ``path`` atomically; creates the folder. Returns the Path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")  # hidden, and unique per process
    try:
        with open(tmp, "wb") as f:
            f.write(data)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
    directory = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(directory)  # the rename is on disk too: a crash now keeps the new file
    finally:
        os.close(directory)
    return path


def write_text(path, text):
    """Write ``text`` (UTF-8) to ``path`` atomically."""
    return write_bytes(path, text.encode("utf-8"))


def write_json(path, obj, indent=1):
    """Write ``obj`` as JSON to ``path`` atomically (non-ASCII kept readable)."""
    return write_text(path, json.dumps(obj, indent=indent, ensure_ascii=False, default=str) + "\n")
