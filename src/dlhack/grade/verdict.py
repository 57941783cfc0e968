"""What the ranks of one run left behind, turned into an outcome and a message for the learner.

    run = summarize(test, ranks, job, records, forged, changed, reason, private, work)

Outcomes: passed; not_done (a stub still raises NotImplementedError); failed (a rank failed an
assertion or raised: the message gives the lowest such rank, and which ranks were left waiting
and where); crashed (a rank died from a signal: its faulthandler traceback says where); hung
(timeout, or some ranks finished and the others never did); tampered (test files changed, what
the test's verdict rests on was replaced, or a result record in the run's own folder that does
not check out: in the sandbox only the submission's own code can write there); error (the test
itself, or mpiexec, could not run; also a record that does not check out when the run was not
sandboxed, for then it may be any process's doing). Output beyond the file limit fails the run
with a message that says so. Places
in the learner's code are given as cell and line, through ``notebook.Submission.where``.
The ranks' run files (``rank.N.stack``, ``rank.N.crash``, ...) are named by tools/runfiles.py
and their dumps read by tools/stacks.py, the same reader as ``dlhack run``'s.
"""
from pathlib import Path

from dlhack.grade.rank import IMPORT_FAILURE, MISSING_ANSWER
from dlhack.tools import stacks
from dlhack.tools.runfiles import read, run_file


def _where(frames, job, work):
    """Where in the learner's cells (file, line, function) frames, innermost first, point."""
    sub = str(work / "submission.py")
    for filename, line, func in frames:
        if filename == sub:
            place = job.submission.where(int(line))
            if place:
                return f"{func} (line {place['line']} of {place['cell']}): {place['code']}"
            return f"{func}, line {line} of the answers"
    for filename, line, func in frames:
        if Path(filename).name.startswith("test_"):
            return f"in the test ({Path(filename).name}, line {line}), not in your code"
    return ""


def _in_answers(where):
    return bool(where) and not where.startswith("in the test")


def _short_mpi_error(message):
    """MPICH's error stack, cut to its last line: "Invalid rank has value 3 but must be ..."."""
    head, _, stack = message.partition(", error stack:")
    lines = stack.strip().splitlines()
    return lines[-1].split("): ", 1)[-1] if lines else head


def _dump_frames(text):
    """The frames of a faulthandler dump as (file, line, function), innermost first."""
    return [(f.file, f.line, f.func) for frames in stacks.parse_dump(text) for f in frames]


def _ranks_text(ranks):
    ranks = sorted(ranks)
    return f"rank {ranks[0]}" if len(ranks) == 1 else "ranks " + ", ".join(map(str, ranks))


FLOOD = "[Errno 27] File too large"  # what a write past RLIMIT_FSIZE raises in Python
# ... and past the space of the sandbox's output (several ranks flooding at once)
FLOOD_MARKS = (FLOOD, "[Errno 28] No space left on device")


def _flooded(details, private, job, own_files=True):
    """Ranks that wrote more output than a file may hold (the rest of it was cut). Without
    ``own_files`` (a launch of several tests) a full output file counts only for a rank that
    did not pass: the flood may have been a later test's."""
    limit = job.file_mb << 20
    found = set()
    for d in details:
        if any(mark in d.get("message", "") for mark in FLOOD_MARKS):
            found.add(d["rank"])
        if not own_files and d["state"] == "passed":
            continue
        path = run_file(private, "out", d["rank"])
        size = path.stat().st_size if path.exists() else 0
        if size >= limit or FLOOD in read(private, "crash", d["rank"]):
            found.add(d["rank"])
    return sorted(found)


def summarize(test, ranks, job, records, forged, changed, reason, private, work, own_files=True):
    """Turn what the ranks left behind into one outcome and a message for the learner.

    ``own_files`` False: the run's output files may hold later tests' output too (the test
    finished on every rank, and the launch ran on), so only the records count.
    """
    details, stuck = [], {}
    for rank in range(ranks):
        record = records.get(rank)
        if record is not None:
            frames = [tuple(f[:3]) for f in reversed(record.get("frames", []))]
            details.append({"rank": rank, "state": record["outcome"],
                            "message": record.get("message", ""),
                            "exc_type": record.get("exc_type", ""),
                            "where": _where(frames, job, work), "phase": record.get("phase", ""),
                            "stdout": record.get("stdout", "")})
            continue
        crash, stack = read(private, "crash", rank), read(private, "stack", rank)
        state = "crashed" if crash.strip() else "waiting" if stack.strip() else "gone"
        text = crash if crash.strip() else stack
        where = _where(_dump_frames(text), job, work)
        message = crash.strip().splitlines()[0] if crash.strip() else ""
        details.append({"rank": rank, "state": state, "message": message, "where": where})
        if state == "waiting":
            stuck.setdefault(where or "somewhere outside your code", []).append(rank)
    # Ranks blocked inside the learner's code: the other rank counts would block there too.
    run = {"ranks": ranks, "details": details, "stuck": any(_in_answers(w) for w in stuck)}
    bad = [d for d in details if d["state"] in ("failed", "error", "skipped")]
    crashed = [d for d in details if d["state"] == "crashed"]
    missing = [d["rank"] for d in details if d["state"] in ("crashed", "waiting", "gone")]
    waiting = "; ".join(f"{_ranks_text(r)} {'was' if len(r) == 1 else 'were'} still waiting "
                        f"{w if w.startswith('in the test') else 'in ' + w}"
                        for w, r in stuck.items())
    on = f"rank {bad[0]['rank']}: " if bad and ranks > 1 else ""

    replaced = [d for d in details if d["state"] == "tampered"]
    if forged and job.trusted and not changed and not replaced:
        return {**run, "outcome": "error",
                "message": f"a result file the grader could not verify ({_ranks_text(forged)}); "
                           f"without the sandbox any process of this user may have written it"}
    if changed or forged or replaced:
        what = (f"changed the grader's test files ({', '.join(changed[:4])})" if changed else
                replaced[0]["message"].removeprefix("your code ") if replaced else
                f"wrote a result file the grader could not verify ({_ranks_text(forged)})")
        return {**run, "outcome": "tampered",
                "message": f"your code {what}; this is not allowed, so the submission scores 0"}
    flooded = _flooded(details, private, job, own_files)
    if flooded:
        return {**run, "outcome": "failed",
                "message": f"{_ranks_text(flooded)} wrote more than {job.file_mb} MB of output "
                           f"(it was cut there), so the test could not finish: print less"}
    if not missing and not bad:
        return {**run, "outcome": "passed", "message": ""}
    if bad and all(d["exc_type"] == "NotImplementedError" and _in_answers(d["where"]) for d in bad):
        func = bad[0]["where"].split(" ")[0]
        return {**run, "outcome": "not_done",
                "message": f"not yet done: {func} still raises NotImplementedError"}
    if crashed:
        first = crashed[0]
        message = f"{_ranks_text([first['rank']])} crashed ({first['message'] or 'killed'})"
        message += f" in {first['where']}" if first["where"] else ""
        return {**run, "outcome": "crashed",
                "message": message + (f". {waiting}" if waiting else "")}
    if bad:
        first = bad[0]
        if first["state"] == "error":
            return {**run, "outcome": "error",
                    "message": f"the test could not run: {first['message']}"}
        kind = first["exc_type"].rsplit(".", 1)[-1]
        raised = kind not in ("AssertionError", "Failed", "")
        message = first["message"]
        if first["exc_type"] == "mpi4py.MPI.Exception":
            message = f"raised an MPI error: {_short_mpi_error(message)}"
        elif raised:
            message = f"raised {kind}: {message}"
        if kind == "MemoryError":
            message += f" (each rank may use at most {job.memory_mb} MiB)"
        if _in_answers(first["where"]):
            message += f" in {first['where']}"
        if len(bad) > 1:
            message += f" ({_ranks_text([d['rank'] for d in bad])} failed)"
        if waiting:
            message += f". Meanwhile {waiting}" + (
                ", for the rank that failed" if raised else
                ": a rank that waits forever usually means another rank skipped the matching "
                "send or receive")
        setup = all(d["phase"] == "setup" and d["message"].startswith(IMPORT_FAILURE) for d in bad)
        missing_answer = all(d["message"].startswith(MISSING_ANSWER) for d in bad)
        return {**run, "outcome": "failed", "message": on + message, "import_failed": setup,
                "missing_answer": missing_answer}
    if reason in ("timeout", "stuck"):
        done = [d["rank"] for d in details if d["state"] == "passed"]
        lead = (f"{_ranks_text(done)} finished, but the others did not" if done
                else f"no rank finished within {test.timeout:g} s")
        hint = " (an endless loop, or a receive that no rank sends to)" if not done else ""
        return {**run, "outcome": "hung", "timed_out": reason == "timeout",
                "message": f"{lead}{hint}" + (f": {waiting}" if waiting else "")}
    if not any(run_file(private, "pid", rank).exists() for rank in missing):
        log = [line for line in read(private, "out").splitlines() if line.strip()]
        return {**run, "outcome": "error", "message": "mpiexec could not start the ranks"
                + (f": {log[-1].strip()}" if log else "")}
    return {**run, "outcome": "crashed",
            "message": f"{_ranks_text(missing)} exited without finishing the test (did the "
                       f"code call sys.exit() or os._exit(), or run out of CPU time?)"}
