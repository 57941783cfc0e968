"""A grading result in three forms: text feedback for the learner, JSON, and JUnit XML.

    print(feedback(result))                 # what a check cell and `dlhack grade` print
    write_json(path, results)               # {"schema": SCHEMA, "submissions": [...]}, atomically
    write_junit(path, results)              # one <testsuite> per submission, one <testcase> per run

The JSON has one shape whether one notebook or a class was graded: ``schema`` names the format
and its version (a reader checks it before anything else), ``submissions`` lists the results.
In the JUnit XML, as pytest writes it, a ``<failure>`` is a wrong answer (a test that failed, or
an exercise not done yet) and an ``<error>`` is a run that could not give an answer: it crashed,
hung, tampered with the grader, or the grader itself could not run it; each suite has ``time``
(seconds) and ``timestamp`` (when its grading started).

The result dict comes from ``schedule.grade`` / ``schedule.grade_notebook``: ``status`` (graded;
error: the answers do not import; invalid: not a notebook; tampered; incomplete: some tests
could not run, a problem of the grader or its environment), ``score``, ``max_score``,
``message``, ``warnings`` and ``exercises``, each with its ``tests``, each with its ``runs`` (one
per rank count). ``dlhack grade`` adds ``graded_at``, ``tampering`` (tampering.py), and where
nbgrader's layout tells them (layout.py) ``student``, ``submitted_at`` and ``late``.
"""
import textwrap
import xml.etree.ElementTree as ET
from datetime import datetime
from pathlib import Path

from dlhack import atomic

MARKS = {"passed": "pass", "not_done": "todo", "not_run": "----"}
SCHEMA = "dlhack-grade/1"  # the JSON's format and version: bump it when a field changes meaning
WRONG = ("failed", "not_done")  # JUnit <failure>; every other outcome but passed and not_run
                                # (crashed, hung, tampered, error) is an <error>


def _points(x):
    return f"{x:g}"


def _wrap(text, indent, first=None):
    return textwrap.fill(text, width=100, initial_indent=first or indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def feedback(result, exercises=None):
    """Feedback in plain text: the score, then each test, and for each failure what to look at."""
    name = Path(result.get("submission") or "").name
    if name and result.get("student"):
        name = f"{result['student']}: {name}"
    lab = result.get("lab") or "?"
    if result["status"] == "invalid":
        return f"{lab}: not graded ({name}): {result['message']}"
    lines = [f"{lab}: {_points(result['score'])} / {_points(result['max_score'])} points"
             + (f"  ({name}, {result['duration_s']:g} s)" if name else "")]
    if result["message"]:
        lines.append(_wrap(result["message"], "    ", "  ! "))
    lines += [_wrap(w, "    ", "  ! ") for w in result.get("warnings", [])]
    for ex in result["exercises"]:
        if exercises and ex["name"] not in exercises:
            continue
        lines.append(f"  {ex['name']}: {_points(ex['score'])} / {_points(ex['max_score'])}"
                     + ("  (not yet done)" if ex["status"] == "not_done" else ""))
        for test in ex["tests"]:
            mark = MARKS.get(test["outcome"], "FAIL")
            ranks = " ".join(str(r["ranks"]) for r in test["runs"])
            worth = f"{_points(test['points'])} pt, ranks {ranks}"
            lines.append(f"    [{mark}] {test['name']} ({worth})")
            if test["message"] and test["outcome"] != "not_run":
                lines.append(_wrap(test["message"], "           "))
    return "\n".join(lines)


def document(results):
    """The JSON document of ``results`` (a list, even of one): ``schema`` and ``submissions``."""
    return {"schema": SCHEMA, "submissions": list(results)}


def write_json(path, results):
    """:func:`document` of ``results`` as indented JSON."""
    atomic.write_json(path, document(results))


def _started(result):
    """When ``result``'s grading started, as JUnit's ``timestamp`` (ISO 8601, local time)."""
    when = result.get("graded_at")
    moment = datetime.fromisoformat(when) if when else datetime.now().astimezone()
    return moment.astimezone().isoformat(timespec="seconds")


def _case(suite, result, ex, test, run, counts):
    """One run as a <testcase>: nothing inside when passed, else skipped, failure or error."""
    counts["tests"] += 1
    case = ET.SubElement(suite, "testcase", classname=f"{result['lab']}.{ex['name']}",
                         name=f"{test['name']}[{run['ranks']} ranks]",
                         time=str(run.get("duration_s", 0)))
    if run["outcome"] == "passed":
        return
    if run["outcome"] == "not_run":
        counts["skipped"] += 1
        ET.SubElement(case, "skipped", message=run["message"] or "")
        return
    kind = "failure" if run["outcome"] in WRONG else "error"
    counts[f"{kind}s"] += 1
    node = ET.SubElement(case, kind, type=run["outcome"], message=run["message"] or run["outcome"])
    node.text = run.get("log", "")


def junit(results):
    """JUnit XML for instructors' tools: a testsuite per submission, a testcase per test run."""
    root = ET.Element("testsuites", name="dlhack grade")
    for result in results:
        name = f"{result.get('lab')}:{result.get('student') or result.get('submission')}"
        suite = ET.SubElement(root, "testsuite", name=name, timestamp=_started(result),
                              time=str(result.get("duration_s", 0)))
        props = ET.SubElement(suite, "properties")
        for key in ("status", "score", "max_score", "student", "submission", "submitted_at"):
            if result.get(key) is not None:
                ET.SubElement(props, "property", name=key, value=str(result[key]))
        for found in result.get("tampering", []):
            ET.SubElement(props, "property", name="tampering", value=found["message"])
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if result["status"] == "invalid":
            case = ET.SubElement(suite, "testcase", classname=str(result.get("lab")),
                                 name="notebook")
            ET.SubElement(case, "error", type="invalid", message=result["message"])
            counts.update(tests=1, errors=1)
        for ex in result["exercises"]:
            for test in ex["tests"]:
                for run in test["runs"]:
                    _case(suite, result, ex, test, run, counts)
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path, results):
    atomic.write_text(path, junit(results))
