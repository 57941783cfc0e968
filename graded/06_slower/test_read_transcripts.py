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


def answer_for(submission, name):
    answers = submission.read_transcripts()
    if not isinstance(answers, dict) or name not in answers:
        pytest.fail(f"read_transcripts() should return a dict with keys 'A', 'B', 'C', "
                    f"got {answers!r}", pytrace=False)
    got = answers[name]
    if not isinstance(got, dict) or set(got) != {"what", "ranks"}:
        pytest.fail(f"transcript {name}: the answer is {{'what': ..., 'ranks': [...]}}, "
                    f"got {got!r}", pytrace=False)
    if got["what"] not in KINDS:
        pytest.fail(f"transcript {name}: 'what' is one of {KINDS}, got {got['what']!r}",
                    pytrace=False)
    try:
        ranks = sorted(int(r) for r in got["ranks"])
    except (TypeError, ValueError):
        pytest.fail(f"transcript {name}: 'ranks' is a list of rank numbers, got "
                    f"{got['ranks']!r}", pytrace=False)
    return got["what"], ranks


@pytest.mark.parametrize("name", sorted(KEY))
@pytest.mark.points(1)
def test_transcript(submission, name):
    """What happened in the transcript, and on which ranks."""
    what, ranks = answer_for(submission, name)
    want_what, want_ranks, why = KEY[name]
    assert what == want_what, (f"transcript {name}: not a case of {what!r}: {why}")
    assert ranks == want_ranks, (f"transcript {name}: {what}, yes, but not on ranks {ranks}: "
                                 f"{why}")
