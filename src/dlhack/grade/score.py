"""The points of one submission: a test earns its points only when it passes at every rank count
it declares; then each exercise's status and the submission's.

    result = score(plan, tests, runs)    # runs: {(nodeid, ranks): run}, from schedule.py

A test that fails at some rank counts and passes at others says so (``passes at 2, 4 ranks,
fails at 3 ranks``), with a hint when only odd counts fail.
"""
ODD_HINT = ("it fails only at odd rank counts: look for code that pairs ranks up or halves the "
            "work, assuming the count is even (or a power of two)")


def score(plan, tests, runs):
    """The result dict of ``tests`` (of ``plan``) given their ``runs`` at each rank count."""
    exercises = [exercise_result(name, [t for t in tests if t.exercise == name], runs)
                 for name in dict.fromkeys(t.exercise for t in tests)]
    tampered = any(r["outcome"] == "tampered" for r in runs.values())
    stopped = [r["message"] for r in runs.values() if r.get("import_failed")]
    broken = [r["message"] for r in runs.values() if r["outcome"] == "error"]
    status = ("tampered" if tampered else "error" if stopped else
              "incomplete" if broken else "graded")
    message = ("the submission changed the grader's files or results; it scores 0" if tampered
               else stopped[0] if stopped else
               f"some tests could not run, which is not the learner's doing ({broken[0]}); "
               f"grade again once that is fixed" if broken else "")
    return {"lab": plan.lab, "status": status, "message": message,
            "score": 0.0 if tampered else sum(e["score"] for e in exercises),
            "max_score": sum(e["max_score"] for e in exercises), "exercises": exercises}


def exercise_result(name, tests, runs):
    """One exercise: its tests' results, points and status (passed, partial, failed, not_done)."""
    graded = [graded_test(t, [runs[(t.nodeid, n)] for n in t.ranks]) for t in tests]
    points = sum(g["score"] for g in graded)
    top = sum(g["points"] for g in graded)
    todo = all(g["outcome"] in ("not_done", "not_run") for g in graded) and any(
        g["outcome"] == "not_done" for g in graded)
    status = ("passed" if points == top else "not_done" if todo else
              "partial" if points > 0 else "failed")
    return {"name": name, "score": points, "max_score": top, "status": status, "tests": graded}


def graded_test(test, runs):
    """One test over its rank counts: passed only if every count passed."""
    passed = all(r["outcome"] == "passed" for r in runs)
    bad = [r for r in runs if r["outcome"] not in ("passed", "not_run")]
    skipped = [r for r in runs if r["outcome"] == "not_run"]
    if passed:
        outcome, message = "passed", ""
    elif not bad:
        outcome, message = "not_run", skipped[0]["message"]
    else:
        outcome, message = bad[0]["outcome"], _message(test, runs, bad, skipped)
    return {"name": test.name, "nodeid": test.nodeid, "doc": test.doc, "points": test.points,
            "score": test.points if passed else 0.0, "outcome": outcome, "message": message,
            "runs": runs}


def _message(test, runs, bad, skipped):
    """The first bad run's message, and at which rank counts the test passes and fails."""
    first = bad[0]
    message = first["message"]
    if len(test.ranks) == 1 or first["outcome"] == "not_done":
        return message
    message = f"at {first['ranks']} rank{'s' if first['ranks'] > 1 else ''}: {message}"
    good = [r["ranks"] for r in runs if r["outcome"] == "passed"]
    failing = [r["ranks"] for r in bad]
    if not good:
        return message
    unrun = [r["ranks"] for r in skipped]
    message = (f"passes at {_counts(good)}, fails at {_counts(failing)}"
               + (f", not run at {_counts(unrun)}" if unrun else "") + ". " + message)
    if all(n % 2 for n in failing) and any(n % 2 == 0 for n in good):
        message += f" ({ODD_HINT})"
    return message


def _counts(counts):
    return ", ".join(map(str, counts)) + (" rank" if counts == [1] else " ranks")
