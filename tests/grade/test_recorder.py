"""grade/recorder.py: the pytest plugin in each graded rank keeps what a test observed and how it
ended, and hands both on as it ends; it decides nothing (checker.py does)."""
import textwrap

import pytest

from dlhack.grade.recorder import Recorder


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
    record, obs = done["test_raises"]
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
