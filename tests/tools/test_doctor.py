"""``dlhack doctor``: passes on this install, and explains each broken setup it is handed.

The checks are plain functions of what they judge, so most tests hand them a broken setup
(numpy 2, too many threads) instead of breaking this machine; the MPI checks' own tests are
test_mpicheck.py's.
"""
import json
import os
import shutil
import subprocess
import sys

from dlhack.tools.doctor import (
    check_blas,
    check_chainer,
    check_gpu,
    check_numpy,
    check_python,
    check_setuptools,
    check_threads,
    exit_status,
    report,
)


def doctor(*args, env=None):
    """``dlhack doctor ARGS`` in a fresh process, as a learner runs it."""
    return subprocess.run([sys.executable, "-m", "dlhack.cli", "doctor", *args],
                          capture_output=True, text=True, env=env, timeout=300, check=False)


def test_doctor_passes_on_this_install(tmp_path):
    done = doctor("-n", "2", "--json", str(tmp_path / "doctor.json"))
    assert done.returncode == 0, done.stdout + done.stderr
    results = json.loads((tmp_path / "doctor.json").read_text())
    status = {r["name"]: r["status"] for r in results}
    assert "FAIL" not in status.values()
    assert status["roundtrip"] == status["mpiexec"] == status["numpy"] == "OK"
    assert "ready for the course" in done.stdout


def test_doctor_passes_without_activating_the_environment(tmp_path):
    """`.venv/bin/dlhack doctor` from a shell that never activated: no FAIL; the round trip uses
    the environment's own mpiexec, and the report says how to get bare `mpiexec` too."""
    bare = os.pathsep.join(p for p in os.environ["PATH"].split(os.pathsep)
                           if not (os.path.isfile(os.path.join(p, "mpiexec"))
                                   or os.path.isfile(os.path.join(p, "dlhack"))))
    # A system MPI puts mpiexec in /usr/bin, beside bwrap: keep the sandbox's tool reachable.
    tools = tmp_path / "tools"
    tools.mkdir()
    if shutil.which("bwrap") and not shutil.which("bwrap", path=bare):
        (tools / "bwrap").symlink_to(shutil.which("bwrap"))
    bare = os.pathsep.join([str(tools), bare])
    env = dict(os.environ, PATH=bare)
    assert shutil.which("mpiexec", path=bare) is None
    done = doctor("-n", "2", "--json", str(tmp_path / "doctor.json"), env=env)
    assert done.returncode == 0, done.stdout + done.stderr
    status = {r["name"]: r for r in json.loads((tmp_path / "doctor.json").read_text())}
    assert status["mpiexec"]["status"] == "INFO" and "activate" in status["mpiexec"]["fix"]
    assert status["roundtrip"]["status"] == "OK"


def test_doctor_fails_when_mpiexec_belongs_to_another_mpi(scripts, tmp_path):
    """A foreign mpiexec first on PATH: named, and its symptom (rank 0 of 1 everywhere) seen."""
    fake = tmp_path / "mpiexec"
    shutil.copy(scripts / "fake_openmpi_mpiexec", fake)
    fake.chmod(0o755)
    env = dict(os.environ, PATH=f"{tmp_path}{os.pathsep}{os.environ['PATH']}")
    done = doctor("-n", "2", env=env)
    assert done.returncode == 1
    lines = done.stdout.splitlines()
    mpiexec = next(line for line in lines if line.startswith("FAIL  mpiexec"))
    assert "Open MPI" in mpiexec and "mpi4py loads MPICH" in mpiexec
    roundtrip = next(line for line in lines if line.startswith("FAIL  roundtrip"))
    assert "2 processes each say they are rank 0 of 1" in roundtrip
    assert "activate the environment" in done.stdout


def test_numpy_2_fails_with_the_fix():
    result = check_numpy("2.1.3")
    assert result.status == "FAIL" and "numpy 2" in result.detail
    assert "'numpy>=1.24,<2'" in result.fix
    assert exit_status([check_python((3, 11, 7)), result]) == 1
    assert check_numpy("1.26.4").status == "OK"


def test_setuptools_74_and_chainer_versions():
    assert check_setuptools("74.1.0", True).status == "FAIL"
    assert "msvccompiler" in check_setuptools("74.1.0", True).detail
    assert check_setuptools("73.0.1", False).status == "FAIL"  # no pkg_resources
    assert check_setuptools("73.0.1", True).status == "OK"
    assert check_chainer("7.8.1").status == "OK"
    assert check_chainer("7.8.1", "ModuleNotFoundError: distutils").status == "FAIL"
    assert check_chainer(None).status == "FAIL"
    assert check_python((3, 12, 1)).status == "FAIL"


def test_threads_that_oversubscribe_the_cores_warn():
    too_many = check_threads({"OMP_NUM_THREADS": "4"}, cores=4, n=2)
    assert too_many.status == "WARN" and "2 rank(s) x 4" in too_many.detail
    assert "fight over the cores" in too_many.detail
    assert "OMP_NUM_THREADS=2 OPENBLAS_NUM_THREADS=2" in too_many.fix
    unset = check_threads({}, cores=2, n=2, blas_threads=2)
    assert unset.status == "WARN" and "unset" in unset.detail
    # OpenBLAS reads OPENBLAS_NUM_THREADS before OMP_NUM_THREADS.
    assert check_threads({"OMP_NUM_THREADS": "8", "OPENBLAS_NUM_THREADS": "1"},
                         cores=2, n=2).status == "OK"


def test_generic_blas_kernels_warn_and_a_forced_core_type_is_reported():
    pool = {"user_api": "blas", "internal_api": "openblas", "version": "0.3.23",
            "num_threads": 2, "architecture": "Prescott"}
    generic = check_blas([pool], {"sse3", "avx2", "avx512f"}, env={})
    assert generic.status == "WARN" and "does not recognise this CPU" in generic.detail
    assert "OPENBLAS_CORETYPE=SkylakeX" in generic.fix and "never sets it" in generic.fix
    forced = check_blas([dict(pool, architecture="Haswell")], {"avx2"},
                        env={"OPENBLAS_CORETYPE": "Haswell"}, native="Prescott")
    assert forced.status == "INFO" and "picks Prescott" in forced.detail
    assert check_blas([dict(pool, architecture="SkylakeX")], {"avx512f"}, env={}).status == "OK"
    assert check_blas([], set(), env={}).status == "WARN"


def test_no_gpu_is_information_not_failure():
    results = [check_gpu({"cupy": None}),
               check_gpu({"cupy": "13.3.0", "devices": ["NVIDIA H200"], "nccl": None}),
               check_gpu({"cupy": "13.3.0", "devices": [], "error": "no CUDA driver"})]
    assert [r.status for r in results] == ["INFO", "WARN", "WARN"]
    assert check_gpu({"cupy": "13.3.0", "devices": ["H200"], "nccl": 22005}).status == "OK"
    assert exit_status(results) == 0
    assert report(results)[-1] == "0 failure(s), 2 warning(s): ready for the course."
