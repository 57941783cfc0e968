"""The wrapper every supervised rank runs in (dlhack.jobs.rankwrap), run by its path as the
supervisor runs it, here as one process without mpiexec: the run files it writes, the exit
status it records, the traceback without its own frames, and the learner's folder first on
``sys.path`` (never the wrapper's, whose neighbours would shadow the learner's modules)."""
import subprocess
import sys

from dlhack.jobs.runfiles import read
from dlhack.jobs.supervise import WRAPPER


def wrapped(run_dir, *args, cwd=None):
    return subprocess.run([sys.executable, str(WRAPPER), str(run_dir), *map(str, args)],
                          cwd=cwd, capture_output=True, text=True, timeout=60, check=False)


def test_output_pid_and_exit_status_go_to_the_run_files(tmp_path):
    done = wrapped(tmp_path, "-c", "import os; print('hello', os.getpid()); raise SystemExit(3)")
    assert done.returncode == 3 and done.stdout == ""  # everything went to the rank's file
    pid = read(tmp_path, "pid", 0).strip()
    assert read(tmp_path, "out", 0) == f"hello {pid}\n"
    assert read(tmp_path, "done", 0) == "3"
    assert (tmp_path / "rank.0.stack").exists() and (tmp_path / "rank.0.crash").exists()


def test_an_uncaught_error_is_printed_without_the_wrappers_frames(tmp_path):
    script = tmp_path / "job.py"
    script.write_text("def f():\n    raise ValueError('no')\n\nf()\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert wrapped(run_dir, script).returncode == 1
    out = read(run_dir, "out", 0)
    assert 'job.py", line 4' in out and out.rstrip().endswith("ValueError: no")
    assert "rankwrap" not in out and "runpy" not in out
    assert read(run_dir, "done", 0) == "1"


def test_the_scripts_folder_comes_first_not_the_wrappers(tmp_path):
    """dlhack/jobs/ holds run.py and stacks.py: a learner's ``import stacks`` must find theirs."""
    (tmp_path / "stacks.py").write_text("WHO = 'learner'\n")
    script = tmp_path / "job.py"
    script.write_text("import sys, stacks\nprint(stacks.WHO, sys.argv[1:])\n")
    run_dir = tmp_path / "run"
    run_dir.mkdir()
    assert wrapped(run_dir, script, "a", "b", cwd="/").returncode == 0
    assert read(run_dir, "out", 0) == "learner ['a', 'b']\n"


def test_a_command_that_is_not_python_keeps_only_its_output(tmp_path):
    assert wrapped(tmp_path, "--exec", "sh", "-c", "echo from sh; exit 4").returncode == 4
    assert read(tmp_path, "out", 0) == "from sh\n"
    assert not (tmp_path / "rank.0.stack").exists()  # no Python here to ask for a stack
