"""nbgrader's course layout (dlhack.grade.layout): the student from the folder, never the file
name; the time from nbgrader's timestamp.txt; late after the due time."""
from datetime import UTC, datetime

from dlhack.grade import layout


def collected(tmp_path, student, stamp="2026-12-02 00:55:01.123456 UTC"):
    folder = tmp_path / "course" / "submitted" / student / "02_collectives"
    folder.mkdir(parents=True)
    (folder / "02_collectives.ipynb").write_text("{}")
    if stamp is not None:
        (folder / "timestamp.txt").write_text(stamp)
    return folder / "02_collectives.ipynb"


def test_the_student_is_the_folder_nbgrader_collected_into(tmp_path):
    for name in ("alice", "bob"):
        collected(tmp_path, name)
    (tmp_path / "course" / "submitted" / "bob" / "02_collectives" / ".ipynb_checkpoints").mkdir()
    entries = layout.find([tmp_path / "course" / "submitted"])
    assert [(e.student, e.lab) for e in entries] == [("alice", "02_collectives"),
                                                    ("bob", "02_collectives")]
    assert entries[0].submitted_at == datetime(2026, 12, 2, 0, 55, 1, 123456, tzinfo=UTC)
    assert entries[0].folder == entries[0].path.parent


def test_a_notebook_elsewhere_has_no_student(tmp_path):
    loose = tmp_path / "02_collectives-tanaka.ipynb"
    loose.write_text("{}")
    assert layout.entry(loose) == layout.Entry(loose)
    assert layout.annotate({}, layout.entry(loose)) == {}


def test_timestamps_as_nbgrader_and_iso_write_them():
    assert layout.parse_timestamp("2026-12-02 00:55:01.5 UTC").tzinfo == UTC
    assert layout.parse_timestamp("2026-12-02T09:55:01+09:00") == datetime(
        2026, 12, 2, 0, 55, 1, tzinfo=UTC)
    assert layout.parse_timestamp("yesterday") is None


def test_late_is_after_the_due_time_and_unknown_without_a_time(tmp_path):
    due = datetime(2026, 12, 2, 0, 0, tzinfo=UTC)
    on_time = layout.entry(collected(tmp_path, "alice", "2026-12-01 23:59:59.000000 UTC"))
    late = layout.entry(collected(tmp_path, "bob"))
    unknown = layout.entry(collected(tmp_path, "carol", stamp=None))
    assert layout.annotate({}, on_time, due)["late"] is False
    assert layout.annotate({}, late, due) == {
        "student": "bob", "submitted_at": "2026-12-02T00:55:01+00:00", "late": True}
    assert layout.annotate({}, unknown, due) == {"student": "carol"}
