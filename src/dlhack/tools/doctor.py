"""``dlhack doctor``: is this environment ready for the course? Each check says OK, INFO, WARN or
FAIL, and how to fix what is not OK.

    dlhack doctor                 # 2 ranks for the MPI round trip
    dlhack doctor -n 4 --json doctor.json

The exit status is 1 when a check FAILs (the course would not work), 0 with only warnings.

Each check is a small function that takes what it judges as arguments (versions, the text of
``mpiexec --version``, the environment) and returns a :class:`Result`, so a test can hand it a
broken setup. :func:`run_checks` gathers the facts of this machine, mostly in fresh Python
processes (what a new notebook kernel or mpiexec rank would see), and calls every check. The
MPI checks (library, mpiexec, the round trip) are in :mod:`dlhack.tools.mpicheck`, those of a
cluster (slots, scheduler, launch inside a job, kernel, GPU layout, sandbox) in
:mod:`dlhack.tools.clustercheck`; what every
check returns, and the fresh-process probe, in :mod:`dlhack.tools.check`.
"""
import argparse
import importlib.metadata
import importlib.util
import json
import os
import sys
from dataclasses import asdict

from dlhack.jobs import allocation
from dlhack.jobs.mpiexec import venv_mpiexec
from dlhack.tools.check import Result, probe, version_tuple
from dlhack.tools.clustercheck import cluster_checks
from dlhack.tools.mpicheck import check_mpi4py, check_mpiexec, check_roundtrip, gather_mpi


def check_python(version_info):
    """The course is built and tested on Python 3.11."""
    version = ".".join(map(str, version_info[:3]))
    if tuple(version_info[:2]) == (3, 11):
        return Result("python", "OK", f"{version} ({sys.executable})")
    if tuple(version_info[:2]) >= (3, 12):
        return Result("python", "FAIL", f"{version}: Python 3.12 removed distutils, which "
                      "Chainer 7.8.1 imports", "create the environment with python3.11")
    return Result("python", "WARN", f"{version}: the course is tested on 3.11 only",
                  "create the environment with python3.11")


def check_chainer(version, import_error=""):
    """Chainer 7.8.1 (the last release; ChainerMN ships inside it) must import cleanly."""
    if version is None:
        return Result("chainer", "FAIL", "not installed", "pip install chainer==7.8.1")
    if import_error:
        return Result("chainer", "FAIL", f"{version} does not import: {import_error}",
                      "the numpy and setuptools lines below say why; fix those first")
    if version != "7.8.1":
        return Result("chainer", "WARN", f"{version}: the course is written for 7.8.1",
                      "pip install chainer==7.8.1")
    return Result("chainer", "OK", f"{version}, imports cleanly")


def check_numpy(version):
    """Chainer 7.8.1 breaks on numpy 2 (removed aliases such as numpy.float_)."""
    if version is None:
        return Result("numpy", "FAIL", "not installed", "pip install 'numpy>=1.24,<2'")
    if version_tuple(version) >= (2,):
        return Result("numpy", "FAIL", f"{version}: Chainer 7.8.1 does not work with numpy 2",
                      "pip install 'numpy>=1.24,<2'")
    return Result("numpy", "OK", version)


def check_setuptools(version, has_pkg_resources):
    """Chainer imports pkg_resources, and numpy.distutils needs setuptools before 74."""
    fix = "pip install 'setuptools<74'"
    if version is None or not has_pkg_resources:
        return Result("setuptools", "FAIL", "missing, or without pkg_resources: Chainer imports "
                      "pkg_resources at start", fix)
    if version_tuple(version) >= (74,):
        return Result("setuptools", "FAIL", f"{version}: importing Chainer loads numpy.distutils,"
                      " which needs distutils.msvccompiler, gone in setuptools 74", fix)
    return Result("setuptools", "OK", f"{version}, provides pkg_resources")


def check_gpu(info):
    """CuPy, the GPUs it sees and NCCL: only needed on GPU machines, so never a FAIL."""
    if not info.get("cupy"):
        return Result("cupy", "INFO", "CuPy not installed: CPU only, which every lab supports",
                      "on a GPU machine: pip install 'cupy-cuda12x>=13,<14' (14 needs numpy 2)")
    devices = info.get("devices") or []
    if not devices:
        return Result("cupy", "WARN", f"CuPy {info['cupy']} sees no GPU "
                      f"({info.get('error') or 'device count 0'})",
                      "check nvidia-smi and CUDA_VISIBLE_DEVICES")
    gpus = f"CuPy {info['cupy']}, {len(devices)} GPU(s): {', '.join(devices)}"
    if not info.get("nccl"):
        return Result("cupy", "WARN", f"{gpus}; NCCL not available, so ChainerMN's "
                      "'pure_nccl' communicator will not work",
                      "python -m cupyx.tools.install_library --library nccl --cuda 12.x; or "
                      "use the 'flat' communicator")
    return Result("cupy", "OK", f"{gpus}; NCCL {info['nccl']}")


def check_threads(env, cores, n, blas_threads=None):
    """Threads per rank times ranks must not exceed the cores, or ranks fight over them."""
    # OpenBLAS reads the first of these that is set; MKL and OpenMP code read the last one.
    name = next((v for v in ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")
                 if env.get(v, "").strip().isdigit()), None)
    value = int(env[name]) if name else None
    per_rank = value if name else (blas_threads or cores)
    setting = f"{name}={value}" if name else "OMP_NUM_THREADS/OPENBLAS_NUM_THREADS unset"
    total = n * per_rank
    detail = f"{setting}: {n} rank(s) x {per_rank} BLAS thread(s) = {total} on {cores} core(s)"
    if total <= cores and name:
        return Result("threads", "OK", detail)
    k = max(1, cores // n)
    fix = f"export OMP_NUM_THREADS={k} OPENBLAS_NUM_THREADS={k}  (cores / ranks per node)"
    if total <= cores:
        return Result("threads", "WARN", detail + "; with more ranks they will oversubscribe", fix)
    return Result("threads", "WARN", detail + ": the ranks fight over the cores, and the "
                  "parallel run looks slower than it is", fix)


# OpenBLAS kernels for CPUs without AVX: what OpenBLAS falls back to on a CPU it does not know.
GENERIC_KERNELS = {"prescott", "core2", "penryn", "dunnington", "nehalem", "atom", "katmai",
                   "coppermine", "northwood", "banias", "opteron", "opteron_sse3", "barcelona",
                   "athlon", "generic"}


def check_blas(pools, cpu_flags, env, native=None):
    """Which BLAS numpy runs and with which kernels (threadpoolctl's ``threadpool_info()``).

    Args:
        pools: ``threadpool_info()`` after ``import numpy``.
        cpu_flags: the CPU's flags (``/proc/cpuinfo``), e.g. {"avx2", "avx512f"}.
        env: the environment; OPENBLAS_CORETYPE there forces a kernel.
        native: the kernel OpenBLAS picks without OPENBLAS_CORETYPE, when that is set.
    """
    blas = next((pool for pool in pools if pool.get("user_api") == "blas"), None)
    if blas is None:
        return Result("blas", "WARN", "threadpoolctl finds no BLAS behind numpy",
                      "pip install threadpoolctl; reinstall numpy from PyPI")
    arch = blas.get("architecture") or blas.get("corename") or "?"
    detail = (f"{blas.get('internal_api')} {blas.get('version') or ''} with {arch} kernels, "
              f"{blas.get('num_threads')} thread(s)")
    best = "SkylakeX" if "avx512f" in cpu_flags else "Haswell" if "avx2" in cpu_flags else None
    forced = env.get("OPENBLAS_CORETYPE")
    if forced:
        picked = f"; without it OpenBLAS picks {native}" if native else ""
        return Result("blas", "INFO", f"{detail}: forced by OPENBLAS_CORETYPE={forced}{picked}",
                      "keep it only if results match a run without it; unset it if anything "
                      "crashes or computes wrong numbers")
    if blas.get("internal_api") == "openblas" and arch.lower() in GENERIC_KERNELS and best:
        return Result("blas", "WARN", f"{detail}: OpenBLAS does not recognise this CPU and runs "
                      f"generic pre-AVX kernels, though the CPU has {best}-class instructions; "
                      "measured on such a machine: about 5x slower matrix products, 2x slower "
                      "training",
                      f"try OPENBLAS_CORETYPE={best} for one run and check the results match "
                      "(a wrong core type crashes or miscomputes, so dlhack never sets it); or "
                      "a newer numpy in a separate environment")
    return Result("blas", "OK", detail)


# Chainer first, as a notebook does: its import errors are the ones learners meet. Then which
# BLAS numpy loaded, and its kernels and threads.
PACKAGES_PROBE = """
import json, warnings
warnings.simplefilter("ignore")
try:
    import chainer
    error = ""
except Exception as exc:
    error = f"{type(exc).__name__}: {exc}"
import numpy
from threadpoolctl import threadpool_info
print(json.dumps({"import_error": error, "pools": threadpool_info()}))
"""
GPU_PROBE = """
import importlib.util, json
info = {"cupy": None}
if importlib.util.find_spec("cupy"):
    try:
        import cupy
        from cupy.cuda import nccl, runtime
        info["cupy"] = cupy.__version__
        names = [runtime.getDeviceProperties(i)["name"] for i in range(runtime.getDeviceCount())]
        info["devices"] = [n.decode() if isinstance(n, bytes) else n for n in names]
        info["nccl"] = nccl.get_version() if nccl.available else None
    except Exception as exc:
        info["error"] = f"{type(exc).__name__}: {exc}"
print(json.dumps(info))
"""


def package_version(name):
    """The installed version of distribution ``name``, or None."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return None


def cpu_flags():
    """The CPU's feature flags from /proc/cpuinfo (empty where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            line = next((line for line in f if line.startswith("flags")), "")
    except OSError:
        return set()
    return set(line.partition(":")[2].split())


def run_checks(n=2, env=None, timeout=60):
    """Gather the facts of this machine and run every check; returns a list of Results."""
    env = dict(os.environ if env is None else env)
    packages = probe(PACKAGES_PROBE, env)
    pools = packages.get("pools", [])
    chainer_error = packages.get("import_error", packages.get("error"))
    native = None
    if env.get("OPENBLAS_CORETYPE"):  # what OpenBLAS would pick by itself, for the report
        unforced = {k: v for k, v in env.items() if k != "OPENBLAS_CORETYPE"}
        native = (probe(PACKAGES_PROBE, unforced).get("pools") or [{}])[0].get("architecture")
    cores = allocation.cores(env)  # the job's, not the machine's
    gpu = probe(GPU_PROBE, env)
    blas_threads = next((p["num_threads"] for p in pools if p.get("user_api") == "blas"), None)
    has_pkg_resources = importlib.util.find_spec("pkg_resources") is not None
    mpi = gather_mpi(n, env, timeout)
    return [
        check_python(sys.version_info),
        check_chainer(package_version("chainer"), chainer_error),
        check_numpy(package_version("numpy")),
        check_setuptools(package_version("setuptools"), has_pkg_resources),
        check_mpi4py(mpi.library),
        check_mpiexec(mpi.mpiexec, mpi.mpiexec_version, mpi.library, beside=venv_mpiexec()),
        check_roundtrip(n, mpi.roundtrip),
        check_gpu(gpu),
        check_threads(env, cores, n, blas_threads),
        check_blas(pools, cpu_flags(), env, native),
        *cluster_checks(n, env, gpu.get("devices"), timeout),
    ]


def report(results):
    """The lines printed for ``results``: one per check, the fix under each that is not OK."""
    lines = []
    for result in results:
        lines.append(f"{result.status:<5} {result.name:<11} {result.detail}")
        if result.fix and result.status != "OK":
            lines.append(f"{'':<17} fix: {result.fix}")
    fails = sum(r.status == "FAIL" for r in results)
    warns = sum(r.status == "WARN" for r in results)
    verdict = "not ready: fix the FAIL lines" if fails else "ready for the course"
    lines.append(f"{fails} failure(s), {warns} warning(s): {verdict}.")
    return lines


def exit_status(results):
    """1 when something would stop the course from working (a FAIL), else 0."""
    return int(any(result.status == "FAIL" for result in results))


def main(argv=None):
    """``dlhack doctor``: run every check, print the report, return 1 on any FAIL."""
    parser = argparse.ArgumentParser(
        prog="dlhack doctor",
        description="Check this environment for the course and explain what to fix.")
    parser.add_argument("-n", "--np", type=int, default=2,
                        help="ranks for the mpiexec round trip, and ranks per node for the "
                             "thread check (default 2)")
    parser.add_argument("--json", metavar="FILE", help="also write the results as JSON to FILE")
    parser.add_argument("-t", "--timeout", type=float, default=60.0,
                        help="seconds the mpiexec round trip may take (default 60)")
    args = parser.parse_args(argv)
    results = run_checks(args.np, timeout=args.timeout)
    print("\n".join(report(results)))
    if args.json:
        with open(args.json, "w") as f:
            json.dump([asdict(r) for r in results], f, indent=1)
    return exit_status(results)


if __name__ == "__main__":
    sys.exit(main())
