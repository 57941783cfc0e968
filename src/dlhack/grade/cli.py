"""Grade lab submissions: ``dlhack grade``.

    dlhack grade labs/02_collectives.ipynb                  # one notebook: feedback on stdout
    dlhack grade my_lab02.ipynb --trusted                   # your own notebook, no sandbox
    dlhack grade tanaka.ipynb --lab 02_collectives --timeout 20 --fail-under 70

A class, in nbgrader's names and folders (COURSE is the instructor's nbgrader course folder):

    # 1. learners hand in from JupyterLab's Assignments tab (or `nbgrader submit`)
    nbgrader collect 02_collectives          # -> COURSE/submitted/STUDENT/02_collectives/
    # 2. grade the collected tree, each run sealed in the sandbox
    dlhack grade COURSE/submitted/ --lab 02_collectives --due 2026-12-03T09:00+00:00 \\
        --csv grades.csv --nbgrader-csv nbgrader-grades.csv --json grades.json \\
        --junit-xml grades.xml --html class.html --feedback COURSE/feedback
    # 3. release: each learner then fetches their own page (Assignments tab, "Fetch Feedback")
    nbgrader release_feedback 02_collectives

The student is the folder nbgrader collected the notebook into (the hub user who submitted it),
never the file's name; its time is nbgrader's timestamp.txt, late when after --due. Every run is
sealed off in a sandbox (grade/sandbox.py: bubblewrap); on a machine without one the grader
refuses, unless --trusted says the notebook is your own. The lab comes from --lab, else the
folder nbgrader collected it into, else the file name (02_collectives*.ipynb), else the
notebook's dlhack.lab metadata; a warning says when they disagree. A changed or deleted locked
cell is named in every output (grade/tampering.py); the score stays what the graded tests give.

Exit status: 0 when every submission got a result (whatever its score, bad notebooks and
tampering included); 1 when some tests could not run for reasons that are not the learner's
(status "incomplete": grade again); 2 when the grader cannot grade at all (no graded/, an
unknown --lab, no sandbox); 3 when a submission scored under --fail-under.
"""
import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from datetime import UTC, datetime
from pathlib import Path

from dlhack.grade import classreport, feedback, layout, report, tampering
from dlhack.grade.plan import LabError, lab_names
from dlhack.grade.schedule import Slots, grade_notebook
from dlhack.jobs import allocation

submissions = layout.notebooks  # the notebooks a list of paths names, folders expanded


def when(text):
    """--due: an ISO 8601 time (a time without a zone is UTC)."""
    moment = datetime.fromisoformat(text)
    return moment if moment.tzinfo else moment.replace(tzinfo=UTC)


def parser():
    p = argparse.ArgumentParser(prog="dlhack grade", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("paths", nargs="+", metavar="SUBMISSION",
                   help="a submitted .ipynb, or a folder of them (nbgrader's submitted/)")
    p.add_argument("--lab", help="the lab (default: from the folder, file name or metadata)")
    p.add_argument("-e", "--exercise", action="append", dest="exercises", metavar="NAME",
                   help="grade only this exercise (repeatable)")
    p.add_argument("-t", "--timeout", type=float, metavar="S",
                   help="seconds per test run (default: each test's own)")
    p.add_argument("--memory-mb", type=int, default=1024, metavar="MB",
                   help="address-space limit of each rank (default: %(default)s)")
    p.add_argument("--slots", type=int, default=None, metavar="RANKS",
                   help="ranks running at once, across submissions (default: the cores this "
                        "job was given, at least 4)")
    p.add_argument("--trusted", action="store_true",
                   help="run without the sandbox: only for your own notebook")
    p.add_argument("--due", type=when, metavar="TIME",
                   help="the deadline (ISO 8601): a later timestamp.txt marks a submission late")
    p.add_argument("--fail-under", type=float, metavar="PERCENT",
                   help="exit 3 when a submission scores under PERCENT of its points")
    out = p.add_argument_group("outputs (each written whole, atomically)")
    out.add_argument("-j", "--json", type=Path, metavar="FILE",
                     help=f"every result as JSON ({{\"schema\": \"{report.SCHEMA}\", "
                          f"\"submissions\": [...]}})")
    out.add_argument("--junit-xml", type=Path, metavar="FILE", dest="junit",
                     help="JUnit XML: a suite per submission, a case per test and rank count")
    out.add_argument("--csv", type=Path, metavar="FILE",
                     help="numbers for a spreadsheet or LMS: a row per student, a column per "
                          "exercise")
    out.add_argument("--nbgrader-csv", type=Path, metavar="FILE",
                     help="the columns `nbgrader export` writes")
    out.add_argument("--html", type=Path, metavar="FILE", help="the class report for mentors")
    out.add_argument("--feedback", type=Path, metavar="DIR",
                     help="a page per learner at DIR/STUDENT/LAB/LAB.html, for `nbgrader "
                          "release_feedback` (DIR: the course's feedback/)")
    p.add_argument("-q", "--quiet", action="store_true", help="print only each score line")
    return p


def grade_one(entry, args, options):
    """Grade one :class:`layout.Entry`; the result says who, when, and what was tampered with."""
    started = datetime.now(UTC).isoformat(timespec="seconds")
    known = entry.lab if entry.lab in lab_names() else None  # submitted/STUDENT/LAB/
    result = grade_notebook(entry.path, lab=args.lab or known, **options)
    result["graded_at"] = started
    layout.annotate(result, entry, args.due)
    if result["status"] != "invalid":
        tampering.annotate(result, entry.path)
    return result


def write_outputs(args, entries, results):
    if args.json:
        report.write_json(args.json, results)
    if args.junit:
        report.write_junit(args.junit, results)
    if args.csv:
        classreport.write_csv(args.csv, results)
    if args.nbgrader_csv:
        classreport.write_nbgrader_csv(args.nbgrader_csv, results, args.due)
    if args.html:
        classreport.write_html(args.html, results)
    if args.feedback:
        for entry, result in zip(entries, results):
            if result.get("lab"):
                feedback.write(args.feedback, result, entry)


def below(result, percent):
    top = result.get("max_score") or 0
    return percent is not None and (not top or 100 * result["score"] / top < percent)


def main(argv=None):
    """Grade the notebooks given; returns the exit status."""
    args = parser().parse_args(argv)
    entries = layout.find(args.paths)
    if not entries:
        print("dlhack grade: no .ipynb files found", file=sys.stderr)
        return 2
    try:
        if args.lab and args.lab not in lab_names():
            print(f"dlhack grade: unknown lab {args.lab!r} (labs: {', '.join(lab_names())})",
                  file=sys.stderr)
            return 2
        options = {"exercises": args.exercises, "timeout": args.timeout,
                   "memory_mb": args.memory_mb, "slots": Slots(args.slots),
                   "trusted": args.trusted}
        # Submissions side by side, up to the cores given; their runs share one pool of slots.
        with ThreadPoolExecutor(max_workers=min(len(entries), allocation.cores())) as pool:
            results = list(pool.map(lambda e: grade_one(e, args, options), entries))
    except LabError as err:
        print(f"dlhack grade: {err}", file=sys.stderr)
        return 2
    for result in results:
        text = report.feedback(result)
        print(text.splitlines()[0] if args.quiet else text)
    write_outputs(args, entries, results)
    if any(r["status"] == "incomplete" for r in results):
        return 1
    return 3 if any(below(r, args.fail_under) for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
