"""What one check of ``dlhack doctor`` returns, and how a check asks a fresh Python for facts.

Shared by :mod:`dlhack.tools.doctor` (packages, GPUs, threads, BLAS) and
:mod:`dlhack.tools.mpicheck` (the MPI library, mpiexec, the round trip).
"""
import json
import re
import subprocess
import sys
from dataclasses import dataclass


@dataclass
class Result:
    """One line of the doctor's report."""

    name: str
    status: str  # "OK", "INFO", "WARN" or "FAIL"
    detail: str
    fix: str = ""


def version_tuple(text):
    """``"1.26.4"`` -> ``(1, 26, 4)``; enough to compare release numbers."""
    return tuple(int(part) for part in re.findall(r"\d+", text or "")[:3])


def probe(code, env=None, timeout=120):
    """Run ``code`` in a fresh Python; it prints one JSON object as its last line."""
    try:
        proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                              env=env, timeout=timeout, check=False)
    except subprocess.TimeoutExpired:
        return {"error": f"no answer in {timeout} s"}
    try:
        return json.loads(proc.stdout.strip().splitlines()[-1])
    except (IndexError, json.JSONDecodeError):  # it crashed: its last words say why
        return {"error": (proc.stderr.strip().splitlines() or [f"status {proc.returncode}"])[-1]}
