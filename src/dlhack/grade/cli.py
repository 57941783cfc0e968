"""Grade lab submissions: ``dlhack grade``.

    dlhack grade labs/02_collectives.ipynb                  # one notebook: feedback on stdout
    dlhack grade submissions/ --json out.json --junit out.xml   # a folder, graded in parallel
    dlhack grade submissions/ --csv class.csv --html class.html   # the class report for mentors
    dlhack grade tanaka.ipynb --lab 02_collectives --timeout 20
    dlhack grade my_lab02.ipynb --trusted                   # your own notebook, no sandbox

Every run is sealed off in a sandbox (grade/sandbox.py: bubblewrap); on a machine without one
the grader refuses, unless ``--trusted`` says the notebook is your own. The lab comes from
``--lab``, else the file name (``02_collectives*.ipynb``), else its folder's name, else the
notebook's ``dlhack.lab`` metadata; a warning says when they disagree. Exit
status: 0 when every submission got a result (whatever its score, bad notebooks and tampering
included); 1 when some tests could not run for reasons that are not the learner's (status
"incomplete": grade again); 2 when the grader cannot grade at all (no graded/, an unknown
--lab, no sandbox).
"""
import argparse
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from dlhack.grade import classreport, report
from dlhack.grade.plan import LabError, lab_names
from dlhack.grade.schedule import Slots, grade_notebook
from dlhack.jobs import allocation


def submissions(paths):
    """The notebooks named, with folders expanded (checkpoints skipped), in a stable order."""
    found = []
    for path in map(Path, paths):
        if path.is_dir():
            found += sorted(p for p in path.rglob("*.ipynb") if ".ipynb_checkpoints" not in p.parts)
        else:
            found.append(path)
    return found


def main(argv=None):
    """Grade the notebooks given; returns the exit status."""
    parser = argparse.ArgumentParser(prog="dlhack grade", description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("paths", nargs="+", metavar="SUBMISSION",
                        help="a submitted .ipynb, or a folder of them")
    parser.add_argument("-l", "--lab", help="the lab (default: from metadata or file name)")
    parser.add_argument("-e", "--exercise", action="append", dest="exercises", metavar="NAME",
                        help="grade only this exercise (repeatable)")
    parser.add_argument("-j", "--json", type=Path, metavar="FILE",
                        help="write the result(s) as JSON")
    parser.add_argument("-x", "--junit", type=Path, metavar="FILE", help="write JUnit XML")
    parser.add_argument("-c", "--csv", type=Path, metavar="FILE",
                        help="write the class table as CSV (a row per learner)")
    parser.add_argument("-H", "--html", type=Path, metavar="FILE",
                        help="write the class report as a small HTML page")
    parser.add_argument("--trusted", action="store_true",
                        help="run without the sandbox: only for your own notebook")
    parser.add_argument("-t", "--timeout", type=float, metavar="S",
                        help="seconds per test run (default: each test's own)")
    parser.add_argument("-m", "--memory", type=int, default=1024, metavar="MB",
                        help="address-space limit of each rank (default: %(default)s)")
    parser.add_argument("-n", "--slots", type=int, default=None, metavar="RANKS",
                        help="ranks running at once (default: the cores this job was given, "
                             "at least 4)")
    parser.add_argument("-q", "--quiet", action="store_true", help="print only each score line")
    args = parser.parse_args(argv)

    paths = submissions(args.paths)
    if not paths:
        print("dlhack grade: no .ipynb files found", file=sys.stderr)
        return 2
    try:
        if args.lab and args.lab not in lab_names():
            print(f"dlhack grade: unknown lab {args.lab!r} (labs: {', '.join(lab_names())})",
                  file=sys.stderr)
            return 2
        slots = Slots(args.slots)
        options = {"lab": args.lab, "exercises": args.exercises, "timeout": args.timeout,
                   "memory_mb": args.memory, "slots": slots, "trusted": args.trusted}
        # Submissions side by side, up to the cores given; their runs share one pool of slots.
        with ThreadPoolExecutor(max_workers=min(len(paths), allocation.cores())) as pool:
            results = list(pool.map(lambda p: grade_notebook(p, **options), paths))
    except LabError as err:
        print(f"dlhack grade: {err}", file=sys.stderr)
        return 2
    for result in results:
        text = report.feedback(result)
        print(text.splitlines()[0] if args.quiet else text)
    if args.json:
        one = len(results) == 1 and not Path(args.paths[0]).is_dir()
        report.write_json(args.json, results[0] if one else {"submissions": results})
    if args.junit:
        report.write_junit(args.junit, results)
    if args.csv:
        classreport.write_csv(args.csv, results)
    if args.html:
        classreport.write_html(args.html, results)
    return 1 if any(r["status"] == "incomplete" for r in results) else 0


if __name__ == "__main__":
    sys.exit(main())
