"""Fixtures for the grader's own tests (helpers are in gradetools.py; ``leftovers`` is in
tests/conftest.py)."""
import os

import pytest


@pytest.fixture
def workdir(tmp_path, leftovers):
    """The grader's temporary directory for one test; afterwards nothing may run there."""
    yield tmp_path
    left = leftovers(tmp_path, below=os.getpid(), wait=3)
    assert not left, f"left running: {left}"
