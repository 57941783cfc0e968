"""Lab 6 (06_slower), exercise 2: ``read_transcripts()``, what happened in transcripts A, B, C.

The transcripts (transcripts/*.txt) are real runs, at 3 ranks, of the scripts in
lessons/scripts/06_slower/: A, every rank raises the same FileNotFoundError; B, rank 2 alone
raises (its shard is empty) and its MPI_Abort ends the others; C, rank 0 skips the allreduce
that ranks 1 and 2 wait in, and the job hangs until `timeout` kills it.
"""
import pytest

KINDS = ("same error on every rank", "error on some ranks", "hang")
KEY = {"A": ("same error on every rank", [0, 1, 2],
             ("count the tracebacks and their [rank] labels: the same FileNotFoundError comes "
             "from every rank, so it does not depend on the rank")),
       "B": ("error on some ranks", [2],
             ("one traceback, labelled [2]: the other ranks only stopped because rank 2 called "
             "MPI_Abort (their output has no error of their own)")),
       "C": ("hang", [0],
             ("no error at all, and `timeout` killed the job (status 124); only rank 0 printed "
             "'done': it went past the Allreduce that ranks 1 and 2 still wait in"))}


def plain(value):
    """The learner's answer as the grader can receive it: dicts, lists, text and numbers."""
    if isinstance(value, dict):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(v) for v in value]
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    return repr(value)


def answer_for(answers, name):
    """``(what, ranks)`` of transcript ``name``, or a sentence saying what is malformed."""
    if not isinstance(answers, dict) or name not in answers:
        return f"read_transcripts() should return a dict with keys 'A', 'B', 'C', got {answers!r}"
    got = answers[name]
    if not isinstance(got, dict) or set(got) != {"what", "ranks"}:
        return f"transcript {name}: the answer is {{'what': ..., 'ranks': [...]}}, got {got!r}"
    if got["what"] not in KINDS:
        return f"transcript {name}: 'what' is one of {KINDS}, got {got['what']!r}"
    try:
        ranks = sorted(int(r) for r in got["ranks"])
    except (TypeError, ValueError):
        return f"transcript {name}: 'ranks' is a list of rank numbers, got {got['ranks']!r}"
    return got["what"], ranks


@pytest.mark.parametrize("name", sorted(KEY))
@pytest.mark.points(1)
def test_transcript(submission, name, observe):
    """What happened in the transcript, and on which ranks."""
    observe(answer=plain(submission.read_transcripts()))


def check_transcript(obs, run):
    name = run.params["name"]
    got = answer_for(obs["answer"], name)
    if isinstance(got, str):
        return got
    what, ranks = got
    want_what, want_ranks, why = KEY[name]
    if what != want_what:
        return f"transcript {name}: not a case of {what!r}: {why}"
    if ranks != want_ranks:
        return f"transcript {name}: {what}, yes, but not on ranks {ranks}: {why}"
    return None
