"""A lab's graded tests (dlhack.grade.plan): what a run gets from graded/, and the listing kept
between sessions (plan.cache_file), named by the digest of the test files: the first check cell
of a session skips a Python that imports pytest and the tests. Never under nbgrader, and a
damaged file is listed again."""
import json

import pytest

from dlhack.grade import plan
from tests.support import ROOT

LAB = "05_large_batch"


@pytest.fixture
def cache_home(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delenv("NBGRADER_EXECUTION", raising=False)
    return tmp_path


def no_subprocess(monkeypatch):
    def refuse(*args, **kwargs):
        raise AssertionError("listed the tests again instead of reading the cache")
    monkeypatch.setattr(plan.subprocess, "run", refuse)


def test_a_second_session_reads_the_listing_from_the_cache(cache_home, monkeypatch):
    files = plan.lab_files(LAB)
    first = plan._listing(LAB, files)
    assert plan.cache_file(LAB, files).is_file() and first["items"]
    no_subprocess(monkeypatch)
    assert plan._listing(LAB, files) == first


def test_other_test_files_are_another_listing(cache_home):
    files = plan.lab_files(LAB)
    changed = tuple((rel, data + b"\n# changed\n" if rel.endswith(".py") else data)
                    for rel, data in files)
    assert plan.cache_file(LAB, files) != plan.cache_file(LAB, changed)


def test_never_under_nbgrader(cache_home, monkeypatch):
    monkeypatch.setenv("NBGRADER_EXECUTION", "autograde")
    files = plan.lab_files(LAB)
    assert plan.cache_file(LAB, files) is None
    plan._listing(LAB, files)
    assert not list(cache_home.rglob("*.json"))


@pytest.mark.parametrize("damage", ["{not json", json.dumps({"items": [{"nodeid": "x"}],
                                                             "errors": []}),
                                    json.dumps({"items": [], "errors": ["boom"]})])
def test_a_damaged_cache_is_listed_again(cache_home, damage):
    files = plan.lab_files(LAB)
    path = plan.cache_file(LAB, files)
    path.parent.mkdir(parents=True)
    path.write_text(damage)
    listing = plan._listing(LAB, files)
    assert {item["name"] for item in listing["items"]} and not listing["errors"]
    assert json.loads(path.read_text()) == listing  # and the cache is mended


def test_a_run_gets_the_adapter_and_its_labs_folder_only():
    """What travels into a sandboxed run: graded/*.py and graded/LAB/, never the grader's own
    test data (tests/grade/mutants, tests/grade/submissions) nor another lab's tests."""
    shipped = {name for name, _ in plan.lab_files(LAB)}
    graded = ROOT / "graded"
    assert shipped == {"pytest.ini", *(p.name for p in graded.glob("*.py")),
                       *(p.relative_to(graded).as_posix() for p in (graded / LAB).rglob("*")
                         if p.is_file() and "__pycache__" not in p.parts)}
    assert plan.graded_root() == graded
