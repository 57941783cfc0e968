"""One test's run at one rank count, worded for the learner: an outcome and a message.

    run = summarize(test, job, Evidence(ranks, records, forged, changed, reason, run_dir, work))

Outcomes: passed; not_done (a stub still raises NotImplementedError); failed (a rank failed an
assertion or raised: the message gives the lowest such rank, and which ranks were left waiting
and where); crashed (a rank died from a signal: its faulthandler traceback says where); hung
(timeout, or some ranks finished and the others never did); tampered (test files changed, what
the test's verdict rests on was replaced, or a result record in the run's own folder that does
not check out: in the sandbox only the submission's own code can write there); error (the test
itself, or mpiexec, could not run; also a record that does not check out when the run was not
sandboxed, for then it may be any process's doing). Output beyond the file limit fails the run
with a message that says so. Places in the learner's code are given as cell and line, through
``notebook.Submission.where``.

How each rank ended is :func:`dlhack.jobs.endings.classify`'s, the same classification that
``dlhack run``'s summary words; here it is worded for a learner, rule by rule (``RULES``), the
first rule that applies giving the outcome.
"""
from dataclasses import dataclass, field
from pathlib import Path

from dlhack.grade.stopearly import IMPORT_FAILURE, MISSING_ANSWER
from dlhack.jobs.endings import FLOOD_MARKS, classify, ranks_text
from dlhack.jobs.runfiles import read


@dataclass
class Evidence:
    """What one test's run left behind, as the batch (batch.py) collected it."""

    ranks: int
    records: dict        # rank -> its record of the test (watch.py)
    forged: list         # ranks whose record did not check out
    changed: list        # the grader's files found changed afterwards
    reason: str          # why the launch was over (watch.py): "reported", "timeout", ...
    run_dir: Path        # the launch's run folder
    work: Path           # the ranks' working folder, where submission.py is
    own_files: bool = True  # False: the output files may hold later tests' output too


@dataclass
class Facts:
    """What the rules read: the test, the job, the evidence, and each rank's detail."""

    test: object
    job: object
    evidence: Evidence
    endings: dict
    details: list
    stuck: dict = field(default_factory=dict)  # where -> the ranks still waiting there

    def having(self, *states):
        return [d for d in self.details if d["state"] in states]

    @property
    def waiting(self):
        """``rank 0 was still waiting in f (line 3 of cell 'a'): ...``, or ""."""
        return "; ".join(f"{ranks_text(r)} {'was' if len(r) == 1 else 'were'} still waiting "
                         f"{w if w.startswith('in the test') else 'in ' + w}"
                         for w, r in self.stuck.items())


def summarize(test, job, evidence):
    """Turn what the ranks left behind into one outcome and a message for the learner."""
    endings = classify(evidence.run_dir, evidence.ranks, records=evidence.records,
                       file_limit=job.file_mb << 20)
    facts = Facts(test, job, evidence, endings,
                  [_detail(ending, job, evidence.work) for ending in endings.values()])
    for d in facts.having("waiting"):
        facts.stuck.setdefault(d["where"] or "somewhere outside your code", []).append(d["rank"])
    # Ranks blocked inside the learner's code: the other rank counts would block there too.
    run = {"ranks": evidence.ranks, "details": facts.details,
           "stuck": any(_in_answers(where) for where in facts.stuck)}
    for rule in RULES:
        verdict = rule(facts)
        if verdict is not None:
            return {**run, **verdict}
    raise AssertionError("the last rule always applies")


def _detail(ending, job, work):
    """One rank's state, message and place, from its record or else its run files."""
    if ending.state == "reported":
        record = ending.record
        frames = [tuple(f[:3]) for f in reversed(record.get("frames", []))]
        return {"rank": ending.rank, "state": record["outcome"],
                "message": record.get("message", ""), "exc_type": record.get("exc_type", ""),
                "where": _where(frames, job, work), "phase": record.get("phase", ""),
                "stdout": record.get("stdout", "")}
    # Without a record of the test, the rest is said alike: it never finished the test.
    state = {"crashed": "crashed", "waiting": "waiting", "busy": "waiting"}.get(ending.state,
                                                                                 "gone")
    message = ending.dump.strip().splitlines()[0] if state == "crashed" else ""
    frames = [(f.file, f.line, f.func) for f in ending.frames]
    return {"rank": ending.rank, "state": state, "message": message,
            "where": _where(frames, job, work)}


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


def _unverified(f):
    """A record that does not check out, outside the sandbox: anyone's doing, so not a grade."""
    if f.evidence.forged and f.job.trusted and not f.evidence.changed and not f.having("tampered"):
        return {"outcome": "error",
                "message": f"a result file the grader could not verify "
                           f"({ranks_text(f.evidence.forged)}); without the sandbox any process "
                           f"of this user may have written it"}
    return None


def _tampered(f):
    changed, forged, replaced = f.evidence.changed, f.evidence.forged, f.having("tampered")
    if not (changed or forged or replaced):
        return None
    what = (f"changed the grader's test files ({', '.join(changed[:4])})" if changed else
            replaced[0]["message"].removeprefix("your code ") if replaced else
            f"wrote a result file the grader could not verify ({ranks_text(forged)})")
    return {"outcome": "tampered",
            "message": f"your code {what}; this is not allowed, so the submission scores 0"}


def _flooded(f):
    """Ranks that wrote more than a file may hold. Without ``own_files`` (a launch of several
    tests) a full output file counts only for a rank that did not pass: the flood may have been
    a later test's."""
    ranks = {d["rank"] for d in f.details if any(m in d["message"] for m in FLOOD_MARKS)}
    ranks |= {d["rank"] for d in f.details if f.endings[d["rank"]].flooded
              and (f.evidence.own_files or d["state"] != "passed")}
    if not ranks:
        return None
    return {"outcome": "failed",
            "message": f"{ranks_text(ranks)} wrote more than {f.job.file_mb} MB of output (it "
                       f"was cut there), so the test could not finish: print less"}


def _passed(f):
    if f.having("crashed", "waiting", "gone", "failed", "error", "skipped"):
        return None
    return {"outcome": "passed", "message": ""}


def _not_done(f):
    bad = f.having("failed", "error", "skipped")
    if bad and all(d["exc_type"] == "NotImplementedError" and _in_answers(d["where"])
                   for d in bad):
        return {"outcome": "not_done", "message": f"not yet done: {bad[0]['where'].split(' ')[0]} "
                                                  f"still raises NotImplementedError"}
    return None


def _crashed(f):
    crashed = f.having("crashed")
    if not crashed:
        return None
    first = crashed[0]
    message = f"{ranks_text([first['rank']])} crashed ({first['message'] or 'killed'})"
    message += f" in {first['where']}" if first["where"] else ""
    return {"outcome": "crashed", "message": message + (f". {f.waiting}" if f.waiting else "")}


def _failed(f):
    """The lowest rank that failed or raised, in its own words, and who was left waiting."""
    bad = f.having("failed", "error", "skipped")
    if not bad:
        return None
    first = bad[0]
    if first["state"] == "error":
        return {"outcome": "error", "message": f"the test could not run: {first['message']}"}
    kind = first["exc_type"].rsplit(".", 1)[-1]
    raised = kind not in ("AssertionError", "Failed", "")
    message = first["message"]
    if first["exc_type"] == "mpi4py.MPI.Exception":
        message = f"raised an MPI error: {_short_mpi_error(message)}"
    elif raised:
        message = f"raised {kind}: {message}"
    if kind == "MemoryError":
        message += f" (each rank may use at most {f.job.memory_mb} MiB)"
    if _in_answers(first["where"]):
        message += f" in {first['where']}"
    if len(bad) > 1:
        message += f" ({ranks_text([d['rank'] for d in bad])} failed)"
    if f.waiting:
        message += f". Meanwhile {f.waiting}" + (
            ", for the rank that failed" if raised else
            ": a rank that waits forever usually means another rank skipped the matching "
            "send or receive")
    on = f"rank {first['rank']}: " if f.evidence.ranks > 1 else ""
    return {"outcome": "failed", "message": on + message,
            "import_failed": all(d["phase"] == "setup" and d["message"].startswith(IMPORT_FAILURE)
                                 for d in bad),
            "missing_answer": all(d["message"].startswith(MISSING_ANSWER) for d in bad)}


def _hung(f):
    if f.evidence.reason not in ("timeout", "stuck"):
        return None
    done = [d["rank"] for d in f.having("passed")]
    lead = (f"{ranks_text(done)} finished, but the others did not" if done
            else f"no rank finished within {f.test.timeout:g} s")
    hint = " (an endless loop, or a receive that no rank sends to)" if not done else ""
    return {"outcome": "hung", "timed_out": f.evidence.reason == "timeout",
            "message": f"{lead}{hint}" + (f": {f.waiting}" if f.waiting else "")}


def _unstarted(f):
    missing = [f.endings[d["rank"]] for d in f.having("crashed", "waiting", "gone")]
    if any(ending.state != "unstarted" for ending in missing):
        return None
    log = [line for line in read(f.evidence.run_dir, "out").splitlines() if line.strip()]
    return {"outcome": "error", "message": "mpiexec could not start the ranks"
            + (f": {log[-1].strip()}" if log else "")}


def _exited(f):
    missing = [d["rank"] for d in f.having("crashed", "waiting", "gone")]
    return {"outcome": "crashed",
            "message": f"{ranks_text(missing)} exited without finishing the test (did the "
                       f"code call sys.exit() or os._exit(), or run out of CPU time?)"}


RULES = (_unverified, _tampered, _flooded, _passed, _not_done, _crashed, _failed, _hung,
         _unstarted, _exited)
