"""Fixtures of the cluster scenarios: the private Slurm (one node, two nodes), a learner, and
the shared course environment (tests/cluster/slurm.py, learners.py, course_env.py).

Each is made once per test module and torn down at its end, asserting that no job, Slurm
process or learner's process is left (the environment is built once per session). Not once per
session: the daemons are this process's children, and the grader's tests assert that nothing
runs below pytest between their tests. Without root or Slurm the tests that use them are skipped with the
reason, except in CI (CI=true), where they fail.
"""
import pytest
from course_env import build
from learners import Learners
from slurm import Slurm, require, unavailable


@pytest.fixture(scope="module")
def site():
    """The shared course environment (deploy/install.sh into ROOT/.site, built once); its path."""
    require(unavailable())
    return build()


@pytest.fixture(scope="module")
def learners():
    require(unavailable())
    with Learners(1) as learners:
        yield learners


@pytest.fixture
def learner(learners):
    return learners.names[0]


@pytest.fixture
def work(learners, learner, request):
    """A folder of the learner's own, for one test."""
    return learners.folder(learner, request.node.name[:40])


@pytest.fixture(scope="module")
def one_node():
    require(unavailable())
    with Slurm(nodes=1, cpus=8) as cluster:
        yield cluster


@pytest.fixture(scope="module")
def two_nodes():
    require(unavailable(nodes=2))
    with Slurm(nodes=2, cpus=2) as cluster:
        yield cluster
