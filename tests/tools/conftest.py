"""The tests of the commands (doctor, ``dlhack run``, ``%%mpiexec``) all run in the course's
environment (``course_env``, with ``scripts`` and ``leftovers``, is in tests/conftest.py)."""
import pytest


@pytest.fixture(autouse=True, scope="module")
def _course_env(course_env):
    yield
