"""Compile one C file into a shared library, so that a process building it never loads half
a file: the grader's MPI shim (``dlhack.grade.pmpi``) and the fused translator's elementwise
kernels (``dlhack.model.ckernels``) are both built this way, on first use.

    why = shared_library(["cc", "-O3"], source, dest, libs=["-lm"])   # None: dest is built

The compiler writes to a hidden temporary name beside ``dest``, renamed into place when it
succeeds (``os.replace``: atomic within a folder), so that the ranks of one job, building at
once, each load a whole library. Costs: the compiler's run, a second or so.
"""
import os
import subprocess
import tempfile


def shared_library(command, source, dest, libs=(), mode=None, tail=300):
    """Build ``source`` into ``dest`` (a Path) with ``command`` (the compiler and its flags),
    then ``chmod`` it to ``mode`` if given; returns None, or why it failed (the end of the
    compiler's message, ``tail`` characters)."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{dest.stem}-", suffix=".so", dir=dest.parent)
    os.close(fd)
    try:
        proc = subprocess.run([*command, "-shared", "-fPIC", "-o", tmp, str(source), *libs],
                              capture_output=True, text=True, timeout=120, check=False)
        if proc.returncode != 0:
            return f"{command[0]} failed: {(proc.stderr or proc.stdout).strip()[-tail:]}"
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, dest)
        return None
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{command[0]} could not run: {err}"
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)
