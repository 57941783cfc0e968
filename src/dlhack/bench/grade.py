"""How long a learner waits for a grade: a check cell per exercise, and a whole lab.

    dlhack bench grade                          # every lab, 3 repeats, sandbox on
    dlhack bench grade --lab 02_collectives --repeats 5
    dlhack bench grade --trusted                # without the sandbox, to see what it costs

Every figure grades the lab's solution notebook (``solutions/LAB.ipynb``) and checks that it
earns full marks: a fast grade of an answer that fails would measure nothing. Three times:

- cold: the first check cell of a session, one exercise, in a fresh interpreter (``dlhack
  grade --exercise``): Python starts, imports the grader, lists the lab's tests, runs them;
- warm: every later check cell, one exercise, in this process, whose list of tests is already
  loaded (what a learner pressing a check cell again waits for);
- lab: the whole lab graded warm in this process (what ``dlhack grade`` spends per notebook).

The goals (issue 17): a check under 8 s and a lab under 20 s on the 2-core machine, with the
sandbox on. Medians over the repeats, the worst beside them; the load average before and after
says how busy the machine was. Writes JSON and a PNG (one bar per check, the goal as a line).
"""
import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

from dlhack.atomic import write_json
from dlhack.bench.model import blas_info
from dlhack.jobs import allocation

CHECK_GOAL_S, LAB_GOAL_S = 8.0, 20.0


def timed(fn):
    start = time.perf_counter()
    value = fn()
    return time.perf_counter() - start, value


def cold_check(notebook, lab, exercise, trusted):
    """Seconds for ``dlhack grade NOTEBOOK -e EXERCISE`` in a fresh interpreter, and its score."""
    cmd = [sys.executable, "-m", "dlhack.cli", "grade", str(notebook), "--lab", lab,
           "--exercise", exercise] + (["--trusted"] if trusted else [])
    took, proc = timed(lambda: subprocess.run(cmd, capture_output=True, text=True, check=False))
    head = proc.stdout.splitlines()[0] if proc.stdout else proc.stderr[-300:]
    return took, head


def full_marks(result):
    return result["status"] == "graded" and result["score"] == result["max_score"]


def bench_lab(lab, root, repeats, trusted):
    """``{exercise: {"cold": [s], "warm": [s]}, "lab": [s]}`` for one lab."""
    from dlhack.grade import notebook
    from dlhack.grade.plan import load_plan
    from dlhack.grade.schedule import grade

    path = root / "solutions" / f"{lab}.ipynb"
    plan = load_plan(lab)
    submission, _ = notebook.from_notebook(path)
    figures = {"exercises": {}, "lab": []}
    for repeat in range(repeats):
        for exercise in plan.exercises:
            row = figures["exercises"].setdefault(exercise, {"cold": [], "warm": []})
            took, head = cold_check(path, lab, exercise, trusted)
            if f"{plan.points(exercise):g} / {plan.points(exercise):g} points" not in head:
                raise SystemExit(f"{lab} {exercise}: the solution did not earn full marks: {head}")
            row["cold"].append(took)
            took, result = timed(lambda ex=exercise: grade(plan, submission, exercises=[ex],
                                               trusted=trusted))
            if not full_marks(result):
                raise SystemExit(f"{lab} {exercise}: the solution scored {result['score']} of "
                                 f"{result['max_score']} ({result['status']})")
            row["warm"].append(took)
            print(f"  {lab} {exercise:<24} cold {row['cold'][-1]:5.1f} s   warm "
                  f"{row['warm'][-1]:5.1f} s   (repeat {repeat + 1})", flush=True)
        took, result = timed(lambda: grade(plan, submission, trusted=trusted))
        if not full_marks(result):
            raise SystemExit(f"{lab}: the solution scored {result['score']} of "
                             f"{result['max_score']} ({result['status']})")
        figures["lab"].append(took)
        print(f"  {lab} whole lab {took:5.1f} s   (repeat {repeat + 1})", flush=True)
    return figures


def table(results):
    """The report: one line per exercise (cold, warm), one per lab; medians and the worst."""
    lines = [f"{'lab':<18} {'exercise':<24} {'cold s':>7} {'warm s':>7} {'worst':>7}  goal"]
    for lab, figures in results.items():
        for exercise, row in figures["exercises"].items():
            warm = statistics.median(row["warm"])
            worst = max(row["warm"] + row["cold"])
            lines.append(f"{lab:<18} {exercise:<24} {statistics.median(row['cold']):>7.1f} "
                         f"{warm:>7.1f} {worst:>7.1f}  {'ok' if worst < CHECK_GOAL_S else 'SLOW'}"
                         f" (< {CHECK_GOAL_S:g} s)")
        whole = figures["lab"]
        lines.append(f"{lab:<18} {'(whole lab)':<24} {'':>7} {statistics.median(whole):>7.1f} "
                     f"{max(whole):>7.1f}  {'ok' if max(whole) < LAB_GOAL_S else 'SLOW'} "
                     f"(< {LAB_GOAL_S:g} s)")
    return "\n".join(lines)


def plot(results, path):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    checks = [(f"{lab[:2]} {ex}", row) for lab, f in results.items()
              for ex, row in f["exercises"].items()]
    labs = [(lab, f["lab"]) for lab, f in results.items()]
    fig, (ax_c, ax_l) = plt.subplots(1, 2, figsize=(11, 0.3 * len(checks) + 1.5),
                                     gridspec_kw={"width_ratios": [3, 2]})
    y = range(len(checks))
    ax_c.barh([i + 0.2 for i in y], [statistics.median(r["cold"]) for _, r in checks], 0.4,
              label="cold (first check)")
    ax_c.barh([i - 0.2 for i in y], [statistics.median(r["warm"]) for _, r in checks], 0.4,
              label="warm (again)")
    ax_c.set_yticks(list(y), [name for name, _ in checks], fontsize=8)
    ax_c.axvline(CHECK_GOAL_S, color="red", ls="--", label=f"goal {CHECK_GOAL_S:g} s")
    ax_c.invert_yaxis()
    ax_c.set(xlabel="s (median)", title="one check cell")
    ax_c.legend(fontsize=8)
    ax_l.barh([name for name, _ in labs], [statistics.median(t) for _, t in labs])
    ax_l.axvline(LAB_GOAL_S, color="red", ls="--", label=f"goal {LAB_GOAL_S:g} s")
    ax_l.invert_yaxis()
    ax_l.set(xlabel="s (median)", title="a whole lab")
    ax_l.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def main(argv=None):
    from dlhack.grade import sandbox
    from dlhack.grade.plan import lab_names, repo_root

    p = argparse.ArgumentParser(prog="dlhack bench grade", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-l", "--lab", action="append", help="a lab (repeatable; default: all)")
    p.add_argument("-r", "--repeats", type=int, default=3)
    p.add_argument("--trusted", action="store_true", help="no sandbox (to see what it costs)")
    p.add_argument("-o", "--out", default="result/bench/grade")
    args = p.parse_args(argv)
    if not args.trusted and sandbox.unavailable():
        print(f"no sandbox here ({sandbox.unavailable()}); pass --trusted to time without it")
        return 2
    root = repo_root()
    labs = args.lab or lab_names()
    print(f"BLAS: {blas_info()}; cores given: {allocation.describe()}; sandbox "
          f"{'off (--trusted)' if args.trusted else 'on'}; load average before "
          f"{os.getloadavg()[0]:.2f}", flush=True)
    results = {lab: bench_lab(lab, root, args.repeats, args.trusted) for lab in labs}
    load_after = os.getloadavg()[0]
    print(f"\nload average after {load_after:.2f}; medians of {args.repeats} repeat(s)\n")
    print(table(results))
    out = Path(args.out)
    write_json(out / "grade.json", {"blas": blas_info(), "args": vars(args), "cores":
                                    allocation.cores(), "load_after": load_after, "results": results})
    plot(results, out / "grade.png")
    print(f"\nwrote {out / 'grade.json'} and {out / 'grade.png'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
