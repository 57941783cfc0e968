"""A feedback page per learner, filed where ``nbgrader release_feedback`` looks for it.

    write(Path("course/feedback"), result, entry)   # feedback/STUDENT/LAB/LAB.html

    dlhack grade course/submitted/ --feedback course/feedback
    nbgrader release_feedback LAB               # each learner then runs fetch_feedback (or the
                                                # Assignments tab's "Fetch Feedback")

The page is one small HTML file, no scripts: the score, each exercise, and for each test that
did not pass, the rank counts it failed at and the grader's message (which names the rank). It
is the text ``dlhack grade`` prints, laid out. Beside it go copies of the submission's
``timestamp.txt`` and ``submission_secret.txt``: ``release_feedback`` files the page under a hash
of that secret, which only the learner who submitted holds, so a learner can fetch their own
feedback and can neither list nor guess anyone else's. A notebook outside nbgrader's layout (no
student) gets ``DIR/NAME.html`` instead.
"""
import html
import shutil
from pathlib import Path

from dlhack import atomic
from dlhack.grade import report

STYLE = ("<style>body{font-family:sans-serif;max-width:60em}table{border-collapse:collapse}"
         "td,th{border:1px solid #ccc;padding:2px 6px;vertical-align:top}"
         ".warn{color:#a00}pre{white-space:pre-wrap}</style>")
KEPT = ("timestamp.txt", "submission_secret.txt")  # what release_feedback reads beside the page


def at(ranks):
    return f"{ranks} rank" + ("" if ranks == 1 else "s")


def failing(result):
    """``(exercise, test, outcome, "ranks: outcome, ...", message)`` per test that did not pass."""
    rows = []
    for ex in result.get("exercises", []):
        for test in ex["tests"]:
            if test["outcome"] in ("passed", "not_run"):
                continue
            runs = ", ".join(f"{at(r['ranks'])}: {r['outcome']}" for r in test["runs"]
                             if r["outcome"] not in ("passed", "not_run"))  # not run: no news
            rows.append((ex["name"], test["name"], test["outcome"], runs, test["message"] or ""))
    return rows


def page(result):
    """The feedback page of one result, as HTML text."""
    esc = html.escape
    who = result.get("student") or Path(result.get("submission") or "?").stem
    lab = result.get("lab") or "?"
    top = result.get("max_score")
    parts = ["<!doctype html><meta charset='utf-8'>",
             f"<title>{esc(lab)}: feedback for {esc(who)}</title>", STYLE,
             f"<h1>{esc(lab)}: feedback for {esc(who)}</h1>",
             f"<p><b>Score: {result['score']:g}" + (f" / {top:g}" if top is not None else "")
             + "</b>" + (f" (submitted {esc(result['submitted_at'])}"
                         + (", late" if result.get("late") else "") + ")"
                         if result.get("submitted_at") else "") + "</p>"]
    if result.get("message"):
        parts.append(f"<p class='warn'>{esc(result['message'])}</p>")
    parts += [f"<p class='warn'>{esc(w)}</p>" for w in result.get("warnings", [])]
    rows = failing(result)
    if rows:
        parts.append("<h2>What did not pass</h2><table><tr><th>exercise</th><th>test</th>"
                     "<th>outcome</th><th>where</th><th>message</th></tr>")
        parts += ["<tr>" + "".join(f"<td>{esc(str(v))}</td>" for v in row) + "</tr>"
                  for row in rows]
        parts.append("</table>")
    parts.append(f"<h2>Every test</h2><pre>{esc(report.feedback(result))}</pre>\n")
    return "\n".join(parts)


def path_for(folder, result, entry):
    """Where the page goes: ``FOLDER/STUDENT/LAB/LAB.html`` (nbgrader's), else by file name."""
    if entry.student:
        return Path(folder) / entry.student / result["lab"] / f"{entry.path.stem}.html"
    return Path(folder) / f"{entry.path.stem}.html"


def write(folder, result, entry):
    """Write the page of ``result`` under ``folder``, with nbgrader's files beside it."""
    target = path_for(folder, result, entry)
    atomic.write_text(target, page(result))
    for name in KEPT if entry.folder else ():
        if (entry.folder / name).is_file():
            shutil.copyfile(entry.folder / name, target.parent / name)
    return target
