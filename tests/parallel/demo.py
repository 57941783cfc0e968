"""What the split models' tests share: their module's demo, run small at 2 ranks."""
import subprocess
import sys

from dlhack.jobs.mpiexec import mpiexec_command


def run_demo(module):
    """``mpiexec -n 2 python -m MODULE`` for 2 steps of a small model; its stdout, once it
    has exited 0."""
    cmd, env = mpiexec_command(2, [sys.executable, "-m", module, "--steps", "2",
                                   "--batchsize", "8", "--units", "32", "--n-train", "100"])
    done = subprocess.run(cmd, capture_output=True, text=True, timeout=120, check=False, env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    return done.stdout
