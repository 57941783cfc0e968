"""A class at a glance, for mentors: one row per learner, one column per exercise, and per test
how many learners fail it and what it most often says.

    dlhack grade submissions/ --csv class.csv --html class.html     # cli.py

``table(results)`` gives the rows, ``tests(results)`` the per-test counts; ``write_csv`` and
``write_html`` write them (the HTML page is one small file, no scripts, to open anywhere).
"""
import csv
import html
import io
from collections import Counter
from pathlib import Path

from dlhack import atomic

STYLE = ("<style>body{font-family:sans-serif}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px}.bad{background:#fdd}</style>")
FAILED = ("failed", "crashed", "hung", "tampered", "error", "not_done")


def learner(result):
    """The learner's name: the notebook's file name without ``.ipynb``."""
    return Path(result.get("submission") or "?").stem


def exercise_names(results):
    return list(dict.fromkeys(ex["name"] for r in results for ex in r.get("exercises", [])))


def table(results):
    """``(header, rows)``: learner, lab, status, score, max score, then each exercise's score."""
    names = exercise_names(results)
    header = ["learner", "lab", "status", "score", "max_score", *names]
    rows = []
    for r in sorted(results, key=learner):
        scores = {ex["name"]: f"{ex['score']:g}/{ex['max_score']:g}" for ex in r["exercises"]}
        top = r.get("max_score")
        rows.append([learner(r), r.get("lab") or "", r["status"], f"{r['score']:g}",
                     "" if top is None else f"{top:g}", *(scores.get(n, "") for n in names)])
    return header, rows


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


def html_text(results):
    header, rows = table(results)
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
    parts.append("</table>\n")
    return "\n".join(parts)


def write_html(path, results):
    atomic.write_text(path, html_text(results))
