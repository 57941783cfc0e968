"""A class graded at once, beside the same notebooks graded one at a time, in one run.

    .venv/bin/python bench/classgrade.py                    # 40 submissions of lab 02 (minutes)
    .venv/bin/python bench/classgrade.py --count 8 --exercise allreduce_naive   # a quick look

Makes ``--count`` submissions of one lab in nbgrader's layout
(``submitted/STUDENTnn/LAB/LAB.ipynb``), a quarter each: right (the solution), wrong
(``wrong_naive``), hanging (``infinite_loop``) and tampered (the solution with a check cell
emptied and its points raised). Then, each in a fresh process, as an instructor would:

1. class: ``dlhack grade submitted/ --csv ...``, every submission side by side on one pool of
   rank slots;
2. one at a time: ``dlhack grade ONE.ipynb`` for each notebook, one after the other.

It prints for each: wall time, submissions per minute and per core-minute (the cores this job
was given), the grader process's peak memory (its own RSS; the ranks live inside the sandbox,
whose init reaps them, so getrusage cannot see them), and checks that both ways give every submission the same score. Nothing is asserted
about speed: the figures are for reading side by side. Needs the sandbox (bubblewrap).
"""
import argparse
import csv
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "src"))
from dlhack.jobs import allocation

LAB = "02_collectives"
PLANTED = ROOT / "tests" / "grade" / "submissions" / LAB
# The grader in a child that reports its own peak RSS (KiB).
RUN = ("import resource, sys\nfrom dlhack.grade.cli import main\ncode = main(sys.argv[1:])\n"
       "print('PEAK', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss)\nsys.exit(code)\n")


def tampered():
    nb = json.loads((ROOT / "solutions" / f"{LAB}.ipynb").read_text())
    for cell in nb["cells"]:
        meta = cell.get("metadata", {}).get("nbgrader", {})
        if meta.get("grade_id") == "check_allreduce_naive":
            cell["source"], meta["points"] = "pass", 30
    return json.dumps(nb)


def make_class(folder, count):
    kinds = {"right": (ROOT / "solutions" / f"{LAB}.ipynb").read_text(),
             "wrong": (PLANTED / "wrong_naive.ipynb").read_text(),
             "hangs": (PLANTED / "infinite_loop.ipynb").read_text(), "tampered": tampered()}
    paths = []
    for i in range(count):
        kind = list(kinds)[i % 4]
        nb = folder / "submitted" / f"student{i:02d}-{kind}" / LAB / f"{LAB}.ipynb"
        nb.parent.mkdir(parents=True)
        nb.write_text(kinds[kind])
        (nb.parent / "timestamp.txt").write_text("2026-12-02 00:00:00.000000 UTC")
        paths.append(nb)
    return paths


def grade(args, extra):
    """One grader process: ``(seconds, grader peak MiB, {student: score})``."""
    with tempfile.TemporaryDirectory() as tmp:
        table = Path(tmp) / "g.csv"
        cmd = [sys.executable, "-c", RUN, *extra, "--lab", LAB, "-q", "--csv", str(table)]
        cmd += [x for e in args.exercise for x in ("-e", e)]
        start = time.monotonic()
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        took = time.monotonic() - start
        if proc.returncode not in (0, 3):
            sys.exit(f"the grader failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
        peak = [line.split()[1:] for line in proc.stdout.splitlines() if line.startswith("PEAK")]
        with open(table) as f:
            scores = {row["student_id"]: row["score"] for row in csv.DictReader(f)}
    return took, int(peak[0][0]) / 1024, scores


def line(name, n, took, own, cores):
    return (f"{name:<14} {n:>3} notebooks  {took:8.1f} s  {60 * n / took:7.2f} /min  "
            f"{60 * n / took / cores:6.2f} /core-min  grader peak {own:6.0f} MiB")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--count", type=int, default=40, help="submissions (default %(default)s)")
    p.add_argument("-e", "--exercise", action="append", default=[],
                   help="grade only this exercise (repeatable; default: the whole lab)")
    args = p.parse_args(argv)
    cores = allocation.cores()
    with tempfile.TemporaryDirectory(prefix="dlhack-class-") as tmp:
        paths = make_class(Path(tmp), args.count)
        whole = grade(args, [str(Path(tmp) / "submitted")])
        alone = [grade(args, [str(path)]) for path in paths]
    took1, own1 = sum(a[0] for a in alone), max(a[1] for a in alone)
    same = {k: v for a in alone for k, v in a[2].items()} == whole[2]
    print(f"{args.count} submissions of {LAB} (right, wrong, hanging, tampered), "
          f"{cores} cores, exercises: {', '.join(args.exercise) or 'all'}")
    print(line("as a class", args.count, whole[0], whole[1], cores))
    print(line("one at a time", args.count, took1, own1, cores))
    print(f"class / one at a time, wall time: {whole[0] / took1:.2f}; "
          f"same scores both ways: {same}")
    return 0 if same else 1


if __name__ == "__main__":
    sys.exit(main())
