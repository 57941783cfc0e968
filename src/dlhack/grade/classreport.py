"""A class at a glance, for mentors: one row per learner, one column per exercise, and per test
how many learners fail it and what it most often says.

    dlhack grade submitted/ --csv class.csv --html class.html     # cli.py

``table(results)`` gives the rows, ``tests(results)`` the per-test counts; ``write_csv`` and
``write_html`` write them (the HTML page is one small file, no scripts, to open anywhere).

The CSV is made to go into a spreadsheet or an LMS: a row per learner and lab, keyed by
``student_id`` (the hub user that nbgrader's ``submitted/STUDENT/LAB/`` folder names; see
``learner``), and every score a plain number: the total, then one column per exercise.
``submitted_at`` and ``late`` (1 or 0) are filled in when the submission's time is known
(nbgrader's ``timestamp.txt``); ``tampered_cells`` counts the lab's cells the submission changed
(``tampering.py``; the score stands). ``nbgrader_csv`` writes the same results in the columns
``nbgrader export`` writes, for tools made for nbgrader.
"""
import csv
import html
import io
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path

from dlhack import atomic

STYLE = ("<style>body{font-family:sans-serif}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px}.bad{background:#fdd}</style>")
FAILED = ("failed", "crashed", "hung", "tampered", "error", "not_done")


def learner(result):
    """The learner's id: ``student`` when the grader knew it (the hub user, from the folder the
    submission was collected into), else the notebook's file name without ``.ipynb``."""
    return result.get("student") or Path(result.get("submission") or "?").stem


def _number(x):
    return "" if x is None else f"{x:g}"


def exercise_names(results):
    return list(dict.fromkeys(ex["name"] for r in results for ex in r.get("exercises", [])))


def table(results):
    """``(header, rows)``: student id, lab, status, score, max score, when it was submitted,
    whether late, then each exercise's score, every score a number."""
    names = exercise_names(results)
    header = ["student_id", "lab", "status", "score", "max_score", "submitted_at", "late",
              "tampered_cells", *names]
    rows = []
    for r in sorted(results, key=lambda r: (learner(r), r.get("lab") or "")):
        scores = {ex["name"]: _number(ex["score"]) for ex in r["exercises"]}
        late = r.get("late")
        rows.append([learner(r), r.get("lab") or "", r["status"], _number(r["score"]),
                     _number(r.get("max_score")), r.get("submitted_at") or "",
                     "" if late is None else int(bool(late)), len(r.get("tampering", [])),
                     *(scores.get(n, "") for n in names)])
    return header, rows


def exercise_max(results):
    """``{exercise: its points}``, from the results that graded it."""
    return {ex["name"]: ex["max_score"] for r in results for ex in r.get("exercises", [])}


def tests(results):
    """Per test: ``(exercise, test, learners failing it, learners graded on it, top message)``."""
    failing, graded, messages = Counter(), Counter(), {}
    for r in results:
        for ex in r.get("exercises", []):
            for t in ex["tests"]:
                key = (ex["name"], t["name"])
                graded[key] += 1
                if t["outcome"] in FAILED:
                    failing[key] += 1
                    messages.setdefault(key, Counter())[_gist(t["message"])] += 1
    return [(ex, name, failing[(ex, name)], graded[(ex, name)],
             messages[(ex, name)].most_common(1)[0][0] if (ex, name) in messages else "")
            for ex, name in graded]


def _gist(message):
    """A message without its rank counts and line numbers, so alike failures count together."""
    text = (message or "").split(". ")[0]
    return text[:200]


def csv_text(results):
    header, rows = table(results)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(header)
    writer.writerows(rows)
    return out.getvalue()


def write_csv(path, results):
    atomic.write_text(path, csv_text(results))


NBGRADER_COLUMNS = ("assignment", "duedate", "timestamp", "student_id", "last_name", "first_name",
                    "email", "raw_score", "late_submission_penalty", "score", "max_score")


def _nbgrader_time(iso):
    """nbgrader's exporter prints naive UTC datetimes (``2026-12-02 00:55:01``); None as None."""
    if not iso:
        return "None"
    moment = datetime.fromisoformat(iso)
    return str(moment.astimezone(UTC).replace(tzinfo=None) if moment.tzinfo else moment)


def nbgrader_csv(results, due=None):
    """The results in ``nbgrader export``'s CSV columns: a row per student and lab, no late
    penalty (nbgrader's default), names and e-mail unknown (None, as nbgrader prints them)."""
    lines = [",".join(NBGRADER_COLUMNS)]
    for r in sorted(results, key=lambda r: (r.get("lab") or "", learner(r))):
        row = {"assignment": r.get("lab"), "duedate": _nbgrader_time(due and due.isoformat()),
               "timestamp": _nbgrader_time(r.get("submitted_at")), "student_id": learner(r),
               "last_name": None, "first_name": None, "email": None, "raw_score": r["score"],
               "late_submission_penalty": 0.0, "score": r["score"],
               "max_score": r.get("max_score") or 0.0}
        lines.append(",".join(str(row[k]) for k in NBGRADER_COLUMNS))
    return "\n".join(lines) + "\n"


def write_nbgrader_csv(path, results, due=None):
    atomic.write_text(path, nbgrader_csv(results, due))


def html_text(results):
    header, rows = table(results)
    tops = exercise_max(results)
    header = [f"{h} (of {tops[h]:g})" if h in tops else h for h in header]
    cell = "".join
    parts = ["<!doctype html><meta charset='utf-8'><title>dlhack grade: class report</title>",
             STYLE,
             "<h1>Class report</h1><table><tr>",
             cell(f"<th>{html.escape(h)}</th>" for h in header), "</tr>"]
    for row in rows:
        bad = row[2] != "graded" or (row[4] and row[3] != row[4])
        parts.append(f"<tr class='{'bad' if bad else ''}'>"
                     + cell(f"<td>{html.escape(str(v))}</td>" for v in row) + "</tr>")
    parts.append("</table><h2>Tests</h2><table><tr><th>exercise</th><th>test</th>"
                 "<th>learners failing</th><th>most common message</th></tr>")
    for ex, name, bad, total, message in tests(results):
        parts.append(f"<tr><td>{html.escape(ex)}</td><td>{html.escape(name)}</td>"
                     f"<td>{bad} / {total}</td><td>{html.escape(message)}</td></tr>")
    parts.append("</table>")
    tampered = [(learner(r), f["message"]) for r in results for f in r.get("tampering", [])]
    if tampered:
        parts.append("<h2>Tampering (scores stand: they come from the grader's own tests)</h2>"
                     "<table><tr><th>learner</th><th>what changed</th></tr>")
        parts += [f"<tr class='bad'><td>{html.escape(who)}</td><td>{html.escape(what)}</td></tr>"
                  for who, what in tampered]
        parts.append("</table>")
    return "\n".join(parts) + "\n"


def write_html(path, results):
    atomic.write_text(path, html_text(results))
