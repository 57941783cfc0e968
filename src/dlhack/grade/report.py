"""A grading result in three forms: text feedback for the learner, JSON, and JUnit XML.

    print(feedback(result))                 # what a check cell and `dlhack grade` print
    write_json(path, result_or_results)     # atomically: a reader never sees half a file
    write_junit(path, results)              # one <testsuite> per submission, one <testcase> per run

The result dict comes from ``schedule.grade`` / ``schedule.grade_notebook``: ``status`` (graded;
error: the answers do not import; invalid: not a notebook; tampered; incomplete: some tests
could not run, a problem of the grader or its environment), ``score``, ``max_score``,
``message``, ``warnings`` and ``exercises``, each with its ``tests``, each with its ``runs`` (one
per rank count).
"""
import textwrap
import xml.etree.ElementTree as ET
from pathlib import Path

from dlhack import atomic

MARKS = {"passed": "pass", "not_done": "todo", "not_run": "----"}


def _points(x):
    return f"{x:g}"


def _wrap(text, indent, first=None):
    return textwrap.fill(text, width=100, initial_indent=first or indent, subsequent_indent=indent,
                         break_long_words=False, break_on_hyphens=False)


def feedback(result, exercises=None):
    """Feedback in plain text: the score, then each test, and for each failure what to look at."""
    name = Path(result.get("submission") or "").name
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


def write_json(path, data):
    """One result, or ``{"submissions": [...]}`` for several, as indented JSON."""
    atomic.write_json(path, data)


def junit(results):
    """JUnit XML for instructors' tools: a testsuite per submission, a testcase per test run."""
    root = ET.Element("testsuites", name="dlhack grade")
    for result in results:
        name = f"{result.get('lab')}:{result.get('submission')}"
        suite = ET.SubElement(root, "testsuite", name=name)
        props = ET.SubElement(suite, "properties")
        for key in ("status", "score", "max_score"):
            ET.SubElement(props, "property", name=key, value=str(result.get(key)))
        counts = {"tests": 0, "failures": 0, "errors": 0, "skipped": 0}
        if result["status"] == "invalid":
            case = ET.SubElement(suite, "testcase", classname=str(result.get("lab")),
                                 name="notebook")
            ET.SubElement(case, "error", message=result["message"])
            counts.update(tests=1, errors=1)
        for ex in result["exercises"]:
            for test in ex["tests"]:
                for run in test["runs"]:
                    counts["tests"] += 1
                    case = ET.SubElement(
                        suite, "testcase", classname=f"{result['lab']}.{ex['name']}",
                        name=f"{test['name']}[{run['ranks']} ranks]",
                        time=str(run.get("duration_s", 0)))
                    if run["outcome"] == "not_run":
                        counts["skipped"] += 1
                        ET.SubElement(case, "skipped", message=run["message"] or "")
                    elif run["outcome"] != "passed":
                        counts["failures"] += 1
                        node = ET.SubElement(case, "failure", type=run["outcome"],
                                             message=run["message"] or run["outcome"])
                        node.text = run.get("log", "")
        for key, value in counts.items():
            suite.set(key, str(value))
    ET.indent(root)
    return ET.tostring(root, encoding="unicode", xml_declaration=True) + "\n"


def write_junit(path, results):
    atomic.write_text(path, junit(results))
