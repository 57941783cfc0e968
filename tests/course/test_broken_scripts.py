"""Lesson 6's broken scripts fail the way the lesson says, and their fixed twins work.

lessons/scripts/06_debugging/NN_name_broken.py and NN_name_fixed.py, each run under mpiexec
(through ``dlhack.tools.launch.run``, which groups errors by rank and aborts a job when a rank
raises) with a timeout. A plain ``mpiexec`` (the hang the lesson shows) runs as the one command of
a job of the same supervisor, ``dlhack.jobs.run``, which kills it and all it started. The timing
comparisons are ``slow``; every kind of bug keeps a fast test.
"""
import io
import os
import shutil
import subprocess
import sys

import pytest

from dlhack.jobs import run as jobs
from dlhack.jobs.mpiexec import THREAD_VARIABLES, find_mpiexec
from dlhack.tools.launch import run
from tests.support import ROOT

SCRIPTS = ROOT / "lessons" / "scripts" / "06_debugging"


def run_script(name, *args, n=2, single=False, timeout=90):
    """Run one script at ``n`` ranks; returns (RunResult, everything it printed)."""
    out = io.StringIO()
    result = run([sys.executable, str(SCRIPTS / name), *args], n=n, single=single,
                 timeout=timeout, stream=out)
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
    assert broken == fixed and len(broken) == 10


# (0) the same error on every rank, and in one process ------------------------------------------

def test_0_an_ordinary_bug_is_the_same_error_on_every_rank_and_in_one_process():
    result, text = run_script("00_every_rank_broken.py")
    ranks, error = only_error(result)
    assert ranks == [0, 1] and error == "KeyError: 'learning_rate'"
    assert "the same error on 2 of 2 ranks" in text
    alone, _ = run_script("00_every_rank_broken.py", single=True)
    assert only_error(alone) == ([0], error)


def test_0_the_right_name_works():
    result, _ = run_script("00_every_rank_fixed.py")
    assert result.returncode == 0 and "learning rate 0.002" in printed(result)


def test_0_a_rank_dependent_bug_does_not_happen_in_one_process():
    alone, _ = run_script("03_one_rank_raises_broken.py", single=True)
    assert alone.returncode == 0 and not alone.errors


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


HOLD_GPU_0 = """
import sys, time, fakegpu
try:
    fakegpu.use(0)
except RuntimeError as error:
    print(error)
    sys.exit(3)
print("holding", flush=True)
time.sleep(float(sys.argv[1]))
"""


def test_a_pretend_gpu_serves_one_process_and_leaves_no_file(tmp_path):
    """Two processes of one parent ask for GPU 0: the second is refused while the first holds
    it, and a classroom's /tmp is left as it was (every run used to leave a folder there)."""
    env = dict(os.environ, TMPDIR=str(tmp_path), PYTHONPATH=str(SCRIPTS))
    first = subprocess.Popen([sys.executable, "-c", HOLD_GPU_0, "30"], env=env, text=True,
                             stdout=subprocess.PIPE)
    try:
        assert first.stdout.readline().strip() == "holding"
        second = subprocess.run([sys.executable, "-c", HOLD_GPU_0, "0"], env=env, text=True,
                                capture_output=True, timeout=60, check=False)
        assert second.returncode == 3 and "cudaErrorDevicesUnavailable" in second.stdout
    finally:
        first.kill()
        first.wait()
    again = subprocess.run([sys.executable, "-c", HOLD_GPU_0, "0"], env=env, text=True,
                           capture_output=True, timeout=60, check=False)
    assert again.returncode == 0, again.stdout  # freed when its holder ended
    assert list(tmp_path.iterdir()) == []


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
    # Ended at once although rank 0 waits for rank 1: the abort did it (without one, the
    # test above hangs). MPICH's own "application called MPI_Abort" line is not asserted: it
    # is forwarded by mpiexec as the job is torn down, and a busy machine has lost it.
    assert "TypeError: 'NoneType' object is not subscriptable" in output


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

def compared(name, timeout=600):
    """What ``compare.py NAME`` printed on rank 0: {"notes": {cell: note}, "verdicts":
    {cell: verdict}, "broken/fixed": {row: ratio}, "profile": [verdict lines]}."""
    result, text = run_script("compare.py", name, timeout=timeout)
    assert result.returncode == 0, text[-3000:]
    found = {"notes": {}, "verdicts": {}, "broken/fixed": {}, "profile": []}
    mine = f"verdict: {name}, "  # every verdict line names its comparison
    for line in result.output[0]:
        if line.startswith("  ") and ": " in line:
            cell, note = line.strip().split(": ", 1)
            found["notes"][cell] = note
        elif not line.startswith(mine):
            continue
        elif " of one process, efficiency " in line:
            cell, verdict = line[len(mine):].split(": ", 1)
            found["verdicts"][cell] = verdict
        elif "the speed of the fixed code" in line:
            row, rest = line[len(mine):].split(": the broken code runs at ", 1)
            found["broken/fixed"][row] = float(rest.split("x")[0])
        else:
            found["profile"].append(line[len(mine):])
    return found


def test_f_the_comparison_wording():
    sys.path.insert(0, str(SCRIPTS))
    from profiled import speedup_verdict

    assert speedup_verdict(0.87, 2, fixed=False).endswith("efficiency 0.43: slower than one "
                                                          "process")
    assert speedup_verdict(1.02, 2, fixed=False).endswith("no faster than one process")
    assert "costs efficiency only" in speedup_verdict(1.4, 2, fixed=False)
    assert speedup_verdict(1.8, 2, fixed=True).endswith("efficiency 0.90: faster than one process")


def test_f_evaluation_on_every_rank_repeats_the_work():
    found = compared("08_eval_every_rank")
    notes = found["notes"]
    assert notes["broken, 2 ranks"].endswith("sentences translated per rank: [192, 192]")
    assert notes["fixed, 2 ranks"].endswith("sentences translated per rank: [96, 96]")
    assert notes["broken, one process"].endswith("[192]")
    bleu = {cell: note.split(";")[0] for cell, note in notes.items()}
    assert len(set(bleu.values())) == 1  # the same score, every way it is computed


@pytest.mark.slow
def test_f_oversubscribed_threads(monkeypatch):
    for name in THREAD_VARIABLES:
        monkeypatch.delenv(name, raising=False)  # as in a shell where nobody set them
    found = compared("06_threads")
    cores = os.cpu_count()
    assert found["notes"]["broken, 2 ranks"] == f"2 x {cores} BLAS threads on {cores} cores"
    assert found["notes"]["fixed, 2 ranks"] == f"2 x {max(1, cores // 2)} BLAS threads on " \
                                               f"{cores} cores"
    # How much slower depends on what else runs on the cores, so the diagnosis is checked.
    assert any("Threads are oversubscribed: 2 ranks x" in v for v in found["profile"])


@pytest.mark.slow
def test_f_tiny_batch_per_rank():
    found = compared("07_tiny_batch")
    assert found["notes"]["broken, 2 ranks"].startswith("batch 2 a rank: ")
    assert found["notes"]["fixed, 2 ranks"].startswith("batch 32 a rank: ")
    assert " ms on the wire) + optimizer" in found["notes"]["broken, 2 ranks, 100 Mb/s link"]
    assert all("Per-step costs dominate with a per-rank batch of 2" in v
               for v in found["profile"])
    # per-step costs paid for 2 sentences instead of 32: a slow-down whatever the load
    assert found["broken/fixed"]["2 ranks"] < 0.5


@pytest.mark.slow
def test_f_every_rank_training_on_the_whole_corpus():
    found = compared("09_whole_corpus")
    notes = found["notes"]
    assert notes["broken, one process"].startswith("one epoch: 20 steps of 32")
    assert notes["broken, 2 ranks"] == "one epoch: 20 steps of 32 sentences a rank, 1280 " \
                                       "sentences trained on"
    assert notes["fixed, 2 ranks"] == "one epoch: 10 steps of 32 sentences a rank, 640 " \
                                      "sentences trained on"
    assert found["broken/fixed"]["2 ranks"] < 0.8  # twice the work on the same two processes
