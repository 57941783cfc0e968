"""grade/recorder.py: the pytest plugin in each graded rank keeps what a test observed and how it
ended, and hands both on as it ends; it decides nothing (checker.py does)."""
import shutil
import textwrap

import pytest

from dlhack.grade.plan import load_plan
from dlhack.grade.recorder import Recorder, host_of
from dlhack.grade.schedule import grade
from tests.grade.gradetools import solution_notebook, with_cell
from tests.support import ROOT


def run(tmp_path, body):
    (tmp_path / "conftest.py").write_text(textwrap.dedent('''
        import pytest

        @pytest.fixture
        def observe(request):
            return lambda **values: request.config.dlhack_observe(values)

        @pytest.fixture
        def seed(request):
            return request.config.dlhack_seed
    '''))
    (tmp_path / f"test_{tmp_path.name}.py").write_text(textwrap.dedent(body))  # a fresh module
    begun, finished = [], {}
    recorder = Recorder(begin=begun.append, seed=41,
                        finish=lambda nodeid, record, obs: finished.update(
                            {nodeid.split("::")[1]: (record, dict(obs))}))
    pytest.main([str(tmp_path), "-q", "-p", "no:cacheprovider", "-c", "/dev/null",
                 "--rootdir", str(tmp_path)], plugins=[recorder])
    return begun, finished, recorder


def test_each_test_hands_on_its_observation_and_ending(tmp_path):
    begun, done, _ = run(tmp_path, '''
        def test_observes(observe, seed):
            observe(got=[1, 2], seed=seed)
            observe(got=3)

        def test_raises(observe):
            observe(got=1)
            raise ValueError("bad answer")

        def test_stub():
            raise NotImplementedError
    ''')
    assert len(begun) == 3
    assert done["test_observes"] == ({"outcome": "passed", "message": ""}, {"got": 3, "seed": 41})
    record, _ = done["test_raises"]
    assert record["outcome"] == "failed" and record["exc_type"] == "ValueError"
    assert record["message"] == "bad answer" and record["frames"]
    assert done["test_stub"][0]["exc_type"] == "NotImplementedError"
    assert done["test_stub"][1] == {}  # a later test starts from nothing


def test_stopping_pytest_is_the_learners_failure(tmp_path):
    _, done, recorder = run(tmp_path, '''
        import pytest

        def test_exits():
            pytest.exit("planted")
    ''')
    assert done == {}  # pytest never finished the test: pytest_in_rank.py writes its record
    record = recorder.record()
    assert record["outcome"] == "failed" and "pytest.exit() was called" in record["message"]


@pytest.mark.parametrize("placement, hosts", [("block", "0011"), ("round_robin", "0101")])
def test_ranks_are_placed_on_simulated_hosts(placement, hosts):
    assert "".join(host_of(r, 4, 2, placement)[-1] for r in range(4)) == hosts
    assert [host_of(r, 3, 2, placement) for r in range(3)][-1] == f"node{hosts[2]}"


LAYOUT_TEST = '''
import pytest
from mpi4py import MPI


@pytest.mark.mpi(ranks=[4], hosts=2, timeout=30)
@pytest.mark.parametrize("placement", ["block", "round_robin"])
def test_layout(submission, comm, observe, placement):
    import chainermn

    mn = chainermn.create_communicator("naive", comm)
    observe(host=MPI.Get_processor_name(), intra=mn.intra_rank, inter_size=mn.inter_size)


def check_layout(obs, run):
    mine = run.hosts[run.rank]
    intra = [r for r in range(run.size) if run.hosts[r] == mine].index(run.rank)
    got = (obs["host"], obs["intra"], obs["inter_size"])
    return None if got == (mine, intra, 2) else f"saw {got}, expected {(mine, intra, 2)}"
'''


def test_chainermn_sees_the_simulated_hosts(tmp_path):
    """At 4 ranks on 2 simulated hosts, ChainerMN's own communicator finds 2 nodes and each
    rank's intra_rank, in block and round-robin placement (intra_rank != rank there)."""
    graded = tmp_path / "root" / "graded"
    (graded / "98_hosts").mkdir(parents=True)
    for path in (ROOT / "graded").glob("*.py"):
        shutil.copyfile(path, graded / path.name)
    (graded / "98_hosts" / "test_layout.py").write_text(LAYOUT_TEST)
    plan = load_plan("98_hosts", tmp_path / "root")
    assert {t.hosts for t in plan.tests} == {2} and all(t.checked for t in plan.tests)
    submission = with_cell(solution_notebook("02_collectives"), "allreduce_naive", "x = 1\n")
    result = grade(plan, submission, workdir=tmp_path)
    tests = result["exercises"][0]["tests"]
    assert [t["outcome"] for t in tests] == ["passed", "passed"], [t["message"] for t in tests]
