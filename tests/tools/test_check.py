"""What one check of ``dlhack doctor`` is made of (dlhack.tools.check): release numbers compared
as numbers, and facts asked from a fresh Python, whose crash or silence is an answer too."""
from dlhack.tools.check import probe, version_tuple


def test_release_numbers_compare_as_numbers():
    assert version_tuple("1.26.4") == (1, 26, 4)
    assert version_tuple("74.0.0") > version_tuple("9.9")
    assert version_tuple("2.0.0rc1") == (2, 0, 0) and version_tuple(None) == ()


def test_a_probe_returns_the_last_json_line_or_what_went_wrong():
    assert probe("print('noise'); print('{\"answer\": 42}')") == {"answer": 42}
    assert probe("raise SystemExit('no MPI here')") == {"error": "no MPI here"}
    assert probe("import time; time.sleep(5)", timeout=0.5) == {"error": "no answer in 0.5 s"}
