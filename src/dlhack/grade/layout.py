"""Who handed a notebook in, for which lab, and when: nbgrader's course layout.

    entries = find(["course/submitted"])    # [Entry(path, student, lab, submitted_at, folder)]
    annotate(result, entry, due)            # result["student"], ["submitted_at"], ["late"]

``nbgrader collect LAB`` copies each learner's latest hand-in from the exchange to
``submitted/STUDENT/LAB/LAB.ipynb``, beside nbgrader's ``timestamp.txt`` (when it was
submitted) and ``submission_secret.txt`` (the key its released feedback is filed under). The
exchange names each hand-in by the Unix user who made it, so the learner's identity is that
folder, never the file's name. A notebook anywhere else (one file, a flat folder of them) has no
student: the reports fall back to its file name. Costs a directory walk and a small read each.
"""
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

SUBMITTED = "submitted"  # nbgrader's CourseDirectory.submitted_directory
TIMESTAMP = "timestamp.txt"


@dataclass(frozen=True)
class Entry:
    """One notebook to grade, and what its place in the course folder says about it."""

    path: Path
    student: str | None = None
    lab: str | None = None
    submitted_at: datetime | None = None

    @property
    def folder(self):
        """``submitted/STUDENT/LAB``, or None outside nbgrader's layout."""
        return self.path.parent if self.student else None


def parse_timestamp(text):
    """nbgrader's ``timestamp.txt`` (``2026-12-02 00:55:01.123456 UTC``, its default
    ``timestamp_format``) or ISO 8601, as an aware datetime; None when unreadable."""
    text = text.strip()
    zone = None
    if text.endswith((" UTC", "Z")):
        text, zone = text.removesuffix(" UTC").removesuffix("Z"), UTC
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        return None
    return moment.replace(tzinfo=moment.tzinfo or zone or UTC)


def entry(path):
    """The :class:`Entry` for a notebook: student, lab and time from ``submitted/S/L/L.ipynb``."""
    path = Path(path)
    parts = path.resolve().parts
    if len(parts) < 4 or parts[-4] != SUBMITTED:
        return Entry(path)
    stamp = path.parent / TIMESTAMP
    when = parse_timestamp(stamp.read_text()) if stamp.is_file() else None
    return Entry(path, student=parts[-3], lab=parts[-2], submitted_at=when)


def notebooks(paths):
    """The notebooks named, with folders expanded (checkpoints and feedback skipped), sorted."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb")
                            if ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(path)
    return found


def find(paths):
    """An :class:`Entry` per notebook under ``paths`` (files, or folders such as submitted/)."""
    return [entry(p) for p in notebooks(paths)]


def annotate(result, entry, due=None):
    """Add the student, the submission time and whether it was late (after ``due``)."""
    if entry.student:
        result["student"] = entry.student
    if entry.submitted_at:
        result["submitted_at"] = entry.submitted_at.isoformat(timespec="seconds")
        if due is not None:
            result["late"] = entry.submitted_at > due
    return result
