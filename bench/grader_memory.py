"""The grader's own memory while submissions flood their real stdout.

    .venv/bin/python bench/grader_memory.py                 # 10 submissions, 200 MB each
    .venv/bin/python bench/grader_memory.py --submissions 4 --mb 100 --ranks 2

Each submission is lab 02's solution with one more line in its allreduce_naive cell: write
``--mb`` MB to file descriptor 1 (the rank's output file, which the grader caps at 64 MB) before
the first test runs. All are graded at once in this process, as ``dlhack grade FOLDER`` grades a
class (one shared pool of rank slots), on allreduce_naive's first test at ``--ranks`` ranks.

It prints, side by side: the peak resident memory of this process (the grader) over the whole
run, read from ``getrusage``, and, for scale, what reading one capped output file costs the old
way (whole, then split into lines) against ``runfiles.output_tail`` (its end, in a fixed
budget), each measured in a fresh process that imports the same modules. Each grading must fail the test with "wrote more
than 64 MB"; the exit status is 1 otherwise. Disk: up to 64 MB per rank and submission, in the
system's temporary folder, removed as each launch ends.
"""
import argparse
import resource
import subprocess
import sys
import tempfile
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
from dlhack.grade.plan import load_plan
from dlhack.grade.schedule import Slots, grade
from tests.grade.gradetools import solution_cell, solution_notebook, with_cell

FLOOD = "import os as _os\nfor _ in range(%d):\n    _os.write(1, b'x' * (1 << 20))\n"
READ_ONE = {
    "whole": "import sys; from pathlib import Path; from dlhack.jobs import runfiles; "
             "lines = Path(sys.argv[1]).read_text(errors='replace').splitlines()",
    "tail": "import sys; from dlhack.jobs.runfiles import output_tail; "
            "text = output_tail(sys.argv[1], 3000)",
}
PEAK = "; import resource; print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024)"


def parse_args(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", "--submissions", type=int, default=10)
    parser.add_argument("-m", "--mb", type=int, default=200, help="MB each writes to stdout")
    parser.add_argument("-r", "--ranks", type=int, default=1, help="ranks per launch")
    return parser.parse_args(argv)


def read_costs(folder):
    """Peak MB of a fresh process reading a 64 MB output file the old way and the new one."""
    run = Path(folder) / "run"
    run.mkdir()
    with open(run / "rank.0.out", "wb") as f:
        f.writelines((b"x" * 99 + b"\n") * 10486 for _ in range(64))  # 64 x 1 MB of lines
    found = {}
    for name, code in READ_ONE.items():
        target = run / "rank.0.out" if name == "whole" else run
        out = subprocess.run([sys.executable, "-c", code + PEAK, str(target)], check=True,
                             capture_output=True, text=True, cwd=ROOT).stdout
        found[name] = int(out.split()[-1])
    return found


def main(argv=None):
    args = parse_args(argv)
    plan = load_plan("02_collectives")
    first = next(t for t in plan.tests if t.exercise == "allreduce_naive")
    plan = replace(plan, tests=(replace(first, ranks=(args.ranks,), timeout=60.0),))
    cell = solution_cell("02_collectives", "allreduce_naive")
    submission = with_cell(solution_notebook("02_collectives"), "allreduce_naive",
                           FLOOD % args.mb + cell)
    slots = Slots()
    start = time.monotonic()
    with tempfile.TemporaryDirectory() as work, ThreadPoolExecutor(args.submissions) as pool:
        results = list(pool.map(lambda _: grade(plan, submission, workdir=work, slots=slots),
                                range(args.submissions)))
        took = time.monotonic() - start
        grader_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024
        checkers_mb = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024
        costs = read_costs(work)
    flooded = sum("wrote more than 64 MB" in r["exercises"][0]["tests"][0]["message"]
                  for r in results)
    print(f"{args.submissions} submissions x {args.mb} MB to stdout at {args.ranks} rank(s), "
          f"graded at once in {took:.1f} s; {flooded} failed with 'wrote more than 64 MB'")
    print(f"grader peak RSS: {grader_mb} MB (largest child, e.g. a checking process or "
          f"mpiexec: {checkers_mb} MB)")
    print(f"one 64 MB output file, peak RSS of a fresh process: read whole {costs['whole']} MB, "
          f"output_tail {costs['tail']} MB ({costs['whole'] / max(costs['tail'], 1):.1f}x)")
    return 0 if flooded == args.submissions else 1


if __name__ == "__main__":
    sys.exit(main())
