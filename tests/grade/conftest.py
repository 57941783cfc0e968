"""Fixtures for the grader's own tests (helpers are in gradetools.py)."""
import time

import pytest
from gradetools import survivors


@pytest.fixture
def workdir(tmp_path):
    """The grader's temporary directory for one test; afterwards nothing may run there."""
    yield tmp_path
    end = time.monotonic() + 3  # SIGKILLed processes take a moment to disappear
    while survivors(tmp_path) and time.monotonic() < end:
        time.sleep(0.1)
    assert not survivors(tmp_path), f"left running: {survivors(tmp_path)}"
