#!/bin/bash
# GPU smoke tests and throughput figures for dlhack on one GPU node, in under 5 minutes.
#
#   jobs/gpu_check.sh                        # from anywhere; it works in the repository root
#   DLHACK_SKIP_INSTALL=1 jobs/gpu_check.sh  # use .venv as it is (no make, no pip)
#
# 1. nvidia-smi must list a GPU. Otherwise: exit 3, "no GPU".
# 2. The environment, from the repository: `make venv`, then the `gpu` extra into .venv
#    (cupy-cuda12x>=13,<14; CuPy 14 needs numpy 2, which Chainer 7.8.1 cannot use).
# 3. CuPy must import, count the GPUs and compile a kernel (that needs the CUDA 12.x toolkit:
#    `module load cuda/12.x` or CUDA_PATH). Otherwise: exit 4, "no CuPy".
# 4. A few training steps on one GPU: dlhack train --gpu --iterations 20.
# 5. Allreduce on CuPy arrays (jobs/gpu_allreduce.py) at 1 rank, and at 2 with two GPUs.
# 6. Throughput, sentences/s: the demo model (128 units, 2 layers) and 256 units, 3 layers.
#
# What was tested where: only steps 1 and 3's refusals, on the course's CPU build machine (no
# GPU); tests/cluster/test_jobs.py runs them. Steps 4-6 have not yet run on a GPU.
set -euo pipefail
cd "$(dirname "$0")/.."
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
export PATH="$PWD/.venv/bin:$PATH"  # the venv's mpiexec matches its mpi4py
out=${DLHACK_GPU_CHECK_OUT:-result/gpu_check}

if ! command -v nvidia-smi >/dev/null 2>&1; then
  echo "gpu_check: no GPU: nvidia-smi is not installed on $(hostname)." >&2
  echo "gpu_check: run this on a GPU node (e.g. inside a job: see jobs/train_pbs.sh)." >&2
  exit 3
fi
gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
if [ "$gpus" -lt 1 ]; then
  echo "gpu_check: no GPU: nvidia-smi lists none on $(hostname) (driver or allocation?)." >&2
  exit 3
fi
echo "== $gpus GPU(s) on $(hostname)"
nvidia-smi -L

if [ -z "${DLHACK_SKIP_INSTALL:-}" ]; then
  echo "== environment: make venv, then the gpu extra"
  make venv
  .venv/bin/python -m pip install --disable-pip-version-check -q -c constraints.txt \
    --no-build-isolation -e '.[gpu]'
fi

if ! python -c "
import cupy
n = cupy.cuda.runtime.getDeviceCount()
assert n > 0, 'no device'
assert int((cupy.arange(4) + 1).sum()) == 10  # compiles a kernel: needs NVRTC from CUDA 12.x
print('CuPy', cupy.__version__, 'sees', n, 'GPU(s)')
"; then
  echo "gpu_check: no CuPy: CuPy does not import, sees no GPU or cannot compile a kernel." >&2
  echo "gpu_check: install it with: .venv/bin/pip install -c constraints.txt '.[gpu]';" >&2
  echo "gpu_check: CuPy 13 needs the CUDA 12.x toolkit: module load cuda/12.x or CUDA_PATH." >&2
  exit 4
fi

mkdir -p "$out"
common=(--eval-every 0 --n-eval 50 --no-progress --n-train 4000)
echo "== 20 training steps on GPU 0"
timeout 120 dlhack train --gpu --iterations 20 "${common[@]}" --out "$out/smoke"

echo "== allreduce on CuPy arrays"
timeout 60 mpiexec -n 1 python jobs/gpu_allreduce.py
if [ "$gpus" -ge 2 ]; then
  timeout 60 mpiexec -n 2 python jobs/gpu_allreduce.py
fi

echo "== throughput (one GPU, batch 64, 200 iterations)"
for model in "128 2" "256 3"; do
  set -- $model
  timeout 150 dlhack train --gpu --iterations 200 --units "$1" --layers "$2" "${common[@]}" \
    --out "$out/u$1_l$2" >"$out/u$1_l$2.log"
  python -c "import json, sys; m = json.load(open(sys.argv[1]))
print(f\"{m['units']} units x {m['layers']} layers: {m['sentences_per_sec']:.0f} sentences/s\")
" "$out/u$1_l$2/metrics.json"
done
echo "gpu_check: all passed"
