"""Lesson 6's broken scripts fail the way the lesson says, and their fixed twins work.

lessons/scripts/06_debugging/NN_name_broken.py and NN_name_fixed.py, each run under mpiexec
(through ``dlhack.tools.launch.run``, which groups errors by rank and aborts a job when a rank
raises) with a timeout. A plain ``mpiexec`` (the hang the lesson shows) runs as the one command of
a job of the same supervisor, ``dlhack.jobs.run``, which kills it and all it started. The timing
comparisons are ``slow``; every kind of bug keeps a fast test.
"""
import io
import shutil
import sys

import pytest

from dlhack.jobs import run as jobs
from dlhack.jobs.mpiexec import THREAD_VARIABLES, find_mpiexec
from dlhack.tools.launch import run
from tests.support import ROOT

SCRIPTS = ROOT / "lessons" / "scripts" / "06_debugging"


def run_script(name, n=2, single=False, timeout=90):
    """Run one script at ``n`` ranks; returns (RunResult, everything it printed)."""
    out = io.StringIO()
    result = run([sys.executable, str(SCRIPTS / name)], n=n, single=single, timeout=timeout,
                 stream=out)
    assert not result.timed_out, f"{name} timed out:\n{out.getvalue()[-3000:]}"
    return result, out.getvalue()


def run_plain(cmd, timeout):
    """``cmd`` (a plain ``mpiexec ...``) as one supervised process: (RunResult, its output)."""
    result = jobs.run(cmd, n=1, single=True, timeout=timeout, stream=io.StringIO(), prefix=False)
    return result, "\n".join(result.output[0])


def only_error(result):
    """The one error group of a run: (its ranks, its text)."""
    assert len(result.errors) == 1, result.summary
    group = result.errors[0]
    return group.ranks, group.message


def printed(result, rank=0):
    return "\n".join(result.output[rank])


def number_after(text, word):
    """The float that follows ``word`` in ``text`` ("BLEU 53.03 ..." -> 53.03)."""
    return float(text.split(word, 1)[1].split()[0].rstrip(";,"))


def test_every_broken_script_has_a_fixed_twin():
    broken = sorted(p.name[:-len("_broken.py")] for p in SCRIPTS.glob("*_broken.py"))
    fixed = sorted(p.name[:-len("_fixed.py")] for p in SCRIPTS.glob("*_fixed.py"))
    assert broken == fixed and len(broken) == 9


# (a) every rank on GPU 0 --------------------------------------------------------------------

def test_a_every_rank_on_gpu_0_fails_on_one_rank_only():
    """The rank that reaches GPU 0 second fails (usually rank 1; the race can go either way)."""
    result, text = run_script("01_device_broken.py")
    ranks, error = only_error(result)
    assert len(ranks) == 1 and "cudaErrorDevicesUnavailable" in error
    assert f"on rank {ranks[0]} only (1 of 2)" in text


def test_a_gpu_from_intra_rank_works():
    result, _ = run_script("01_device_fixed.py")
    assert result.returncode == 0
    assert "rank 1 (intra_rank 1) uses GPU 1" in printed(result, 1)


@pytest.mark.slow
def test_a_intra_rank_restarts_on_each_node(tmp_path):
    """Two pretend nodes of two ranks: ranks 2 and 3 use GPUs 0 and 1 of the second node."""
    script = str(SCRIPTS / "01_device_fixed.py")
    cmd = [find_mpiexec(), "-n", "2", "-env", "DLHACK_HOSTNAME", "a", sys.executable, script, ":",
           "-n", "2", "-env", "DLHACK_HOSTNAME", "b", sys.executable, script]
    result, output = run_plain(cmd, timeout=120)
    assert result.returncode == 0, output
    for rank, gpu in enumerate([0, 1, 0, 1]):
        assert f"rank {rank} (intra_rank {gpu}) uses GPU {gpu}" in output


# (b) arrays made before the device is set ----------------------------------------------------

def test_b_array_before_the_device_fails_on_rank_1_only():
    result, _ = run_script("02_arrays_before_device_broken.py")
    ranks, error = only_error(result)
    assert ranks == [1]
    assert "array device = 0 while current = 1" in error


def test_b_device_first_works():
    result, _ = run_script("02_arrays_before_device_fixed.py")
    assert result.returncode == 0 and "device=1" in printed(result, 1)


# (c) one rank raises before a collective -----------------------------------------------------

def test_c_plain_mpiexec_hangs_until_killed(tmp_path, leftovers):
    for name in ("03_one_rank_raises_broken.py", "settings.json"):
        shutil.copy(SCRIPTS / name, tmp_path / name)  # a path of its own, to find leftovers
    script = tmp_path / "03_one_rank_raises_broken.py"
    result, output = run_plain([find_mpiexec(), "-n", "2", sys.executable, str(script)],
                               timeout=8)
    assert result.timed_out, f"expected a hang, but mpiexec ended with {result.returncode}:\n" \
                             f"{output}"
    assert "TypeError: 'NoneType' object is not subscriptable" in output
    assert leftovers(script, wait=5) == []


def test_c_python_m_mpi4py_aborts_at_once():
    result, output = run_plain([find_mpiexec(), "-n", "2", sys.executable, "-m", "mpi4py",
                                str(SCRIPTS / "03_one_rank_raises_broken.py")], timeout=60)
    assert not result.timed_out and result.returncode != 0 and result.seconds < 30, output
    assert "TypeError: 'NoneType' object is not subscriptable" in output
    assert "MPI_Abort" in output


def test_c_dlhack_run_aborts_and_names_rank_1():
    result, text = run_script("03_one_rank_raises_broken.py")
    assert only_error(result)[0] == [1] and result.aborted == [1]
    assert "on rank 1 only (1 of 2): TypeError" in text


def test_c_broadcast_fixes_it():
    result, _ = run_script("03_one_rank_raises_fixed.py")
    assert result.returncode == 0 and "global batch: 128 sentences" in printed(result)


# (d) an empty shard at 4 ranks ----------------------------------------------------------------

@pytest.fixture(scope="module")
def one_process_dev_loss():
    result, _ = run_script("04_empty_shard_fixed.py", single=True)
    return number_after(printed(result), "dev loss")


def test_d_empty_shard_fails_on_rank_3_only_at_4_ranks():
    result, text = run_script("04_empty_shard_broken.py", n=4)
    ranks, error = only_error(result)
    assert ranks == [3] and "max() arg is an empty sequence" in error
    assert "on rank 3 only (1 of 4)" in text


def test_d_weighted_mean_equals_one_process_at_4_ranks(one_process_dev_loss):
    result, _ = run_script("04_empty_shard_fixed.py", n=4)
    assert number_after(printed(result), "dev loss") == pytest.approx(one_process_dev_loss,
                                                                      abs=1e-3)


@pytest.mark.slow
def test_d_unweighted_mean_is_wrong_at_2_ranks(one_process_dev_loss):
    result, _ = run_script("04_empty_shard_broken.py", n=2)
    assert result.returncode == 0
    assert abs(number_after(printed(result), "dev loss") - one_process_dev_loss) > 0.5


# (e) BLEU averaged over ranks -----------------------------------------------------------------

@pytest.fixture(scope="module")
def one_process_bleu():
    result, _ = run_script("05_bleu_mean_fixed.py", single=True)
    return number_after(printed(result), "BLEU")


def test_e_mean_of_rank_bleu_differs_from_corpus_bleu(one_process_bleu):
    result, _ = run_script("05_bleu_mean_broken.py")
    assert abs(number_after(printed(result), "BLEU") - one_process_bleu) > 1.0


def test_e_gather_corpus_bleu_equals_one_process(one_process_bleu):
    result, _ = run_script("05_bleu_mean_fixed.py")
    assert number_after(printed(result), "BLEU") == one_process_bleu


# (f) slower in parallel -----------------------------------------------------------------------

def evaluation(name):
    result, _ = run_script(name)
    text = printed(result)
    counts = text.split("per rank: ", 1)[1].splitlines()[0]
    return number_after(text, "BLEU"), counts, number_after(text, "evaluation took")


@pytest.fixture(scope="module")
def evaluations():
    return {v: evaluation(f"08_eval_every_rank_{v}.py") for v in ("broken", "fixed")}


def test_f_evaluation_on_every_rank_repeats_the_work(evaluations):
    (bleu_broken, counts_broken, _), (bleu_fixed, counts_fixed, _) = evaluations.values()
    assert counts_broken == "[96, 96]" and counts_fixed == "[48, 48]"
    assert bleu_broken == bleu_fixed  # the same score, computed twice as fast


@pytest.mark.slow
def test_f_evaluation_on_shards_is_faster(evaluations):
    assert evaluations["fixed"][2] < 0.8 * evaluations["broken"][2]


def profiled(name, n=2, single=False):
    """(sentences/s, verdict) printed by a script that uses profiled.py."""
    result, _ = run_script(name, n=n, single=single, timeout=180)
    text = printed(result)
    return float(text.split(" sentences/s")[0].split()[-1]), text.split("verdict: ", 1)[1]


@pytest.mark.slow
def test_f_oversubscribed_threads(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)  # as in a shell where nobody set them
    _, broken_verdict = profiled("06_threads_broken.py")
    _, fixed_verdict = profiled("06_threads_fixed.py")
    # How much slower depends on what else runs on the cores (4x on a quiet 2-core machine,
    # hardly at all when other jobs keep both cores busy), so only the diagnosis is checked.
    assert "Threads are oversubscribed: 2 ranks x" in broken_verdict
    assert "oversubscribed" not in fixed_verdict


@pytest.mark.slow
def test_f_tiny_batch_per_rank():
    single_speed, _ = profiled("07_tiny_batch_broken.py", single=True)  # batch 4, one process
    broken_speed, broken_verdict = profiled("07_tiny_batch_broken.py")  # batch 2 on each rank
    fixed_speed, fixed_verdict = profiled("07_tiny_batch_fixed.py")  # batch 32 on each rank
    assert "Per-step costs dominate with a per-rank batch of 2" in broken_verdict
    assert "Per-step costs dominate" not in fixed_verdict
    assert broken_speed < 1.1 * single_speed  # two ranks: no faster than one
    assert fixed_speed > 3 * broken_speed


@pytest.mark.slow
def test_f_every_rank_training_on_the_whole_corpus():
    def epoch(name, **kwargs):
        result, _ = run_script(name, timeout=180, **kwargs)
        text = printed(result)
        return (int(number_after(text, "one epoch:")),
                number_after(text, "sentences per rank,"))

    single_steps, _ = epoch("09_whole_corpus_broken.py", single=True)
    broken_steps, broken_s = epoch("09_whole_corpus_broken.py")
    fixed_steps, fixed_s = epoch("09_whole_corpus_fixed.py")
    assert broken_steps == single_steps == 20 and fixed_steps == 10
    assert fixed_s < 0.8 * broken_s
