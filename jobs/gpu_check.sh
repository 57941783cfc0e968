#!/bin/bash
# GPU smoke tests and throughput figures for dlhack on one GPU node, in under 5 minutes.
#
#   sbatch jobs/gpu_check.sh                 # from the course's folder (the submit folder)
#   DLHACK_HOME=/opt/dlhack/course sbatch jobs/gpu_check.sh   # from anywhere
#   jobs/gpu_check.sh                        # on a GPU node you are logged in to
#
# It never installs anything: the environment is prepared once by the admin (deploy/README.md:
# deploy/install.sh, then the `gpu` extra into it: cupy-cuda12x>=13,<14; CuPy 14 needs numpy 2,
# which Chainer 7.8.1 cannot use). Settings, in the environment:
#   DLHACK_HOME    the course's folder (default: the folder sbatch was run from, else the one
#                  above this script; Slurm runs a copy of the script from its spool, so the
#                  script's own folder says nothing under sbatch)
#   DLHACK_VENV    the environment (default: DLHACK_HOME/.venv)
#   DLHACK_DEVICE  gpu (default), or cpu: steps 1 and 3 are skipped and steps 4-6 run on the
#                  CPU, which is how the tests run this script under Slurm
#   DLHACK_GPU_CHECK_OUT  where the runs go (default: result/gpu_check, in the folder the job
#                  starts in: the submit folder under sbatch)
#   DLHACK_ITERATIONS, DLHACK_N_TRAIN  a shorter step 6 (default 200 iterations, 4000
#                  sentences; the tests use 5 and 400: on the CPU the default takes minutes)
#
# 1. nvidia-smi must list a GPU. Otherwise: exit 3, "no GPU".
# 2. The environment must be there. Otherwise: exit 5, "no environment".
# 3. CuPy must import, count the GPUs and compile a kernel (that needs the CUDA 12.x toolkit:
#    `module load cuda/12.x` or CUDA_PATH). Otherwise: exit 4, "no CuPy".
# 4. A few training steps on one GPU: dlhack train --gpu --iterations 20.
# 5. Allreduce on CuPy arrays (jobs/gpu_allreduce.py) at 1 rank, and at 2 with two GPUs.
# 6. Throughput, sentences/s: the demo model (128 units, 2 layers) and 256 units, 3 layers.
#
# What was tested where: steps 1 and 3's refusals on the course's CPU build machine
# (tests/cluster/test_jobs.py), and the whole script with DLHACK_DEVICE=cpu under a private
# Slurm (tests/cluster/test_jobs_slurm.py). Steps 4-6 have not yet run on a GPU.
#SBATCH --job-name=dlhack-gpu-check
#SBATCH --nodes=1
#SBATCH --ntasks=2
#SBATCH --cpus-per-task=2
#SBATCH --gpus-per-node=2
#SBATCH --time=00:10:00
#SBATCH --output=%x-%j.out
set -euo pipefail
home=$(cd "${DLHACK_HOME:-${SLURM_SUBMIT_DIR:-$(dirname "$0")/..}}" && pwd)
venv=${DLHACK_VENV:-$home/.venv}
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}
out=${DLHACK_GPU_CHECK_OUT:-result/gpu_check}
cpu=no
[ "${DLHACK_DEVICE:-gpu}" = cpu ] && cpu=yes

gpus=0
if [ $cpu = no ]; then
  if ! command -v nvidia-smi >/dev/null 2>&1; then
    echo "gpu_check: no GPU: nvidia-smi is not installed on $(hostname)." >&2
    echo "gpu_check: run this on a GPU node (sbatch jobs/gpu_check.sh)." >&2
    exit 3
  fi
  gpus=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU ' || true)
  if [ "$gpus" -lt 1 ]; then
    echo "gpu_check: no GPU: nvidia-smi lists none on $(hostname) (driver or allocation?)." >&2
    exit 3
  fi
  echo "== $gpus GPU(s) on $(hostname)"
  nvidia-smi -L
else
  echo "== DLHACK_DEVICE=cpu: the GPU steps run on the CPU of $(hostname)"
fi

if [ ! -x "$venv/bin/python" ]; then
  echo "gpu_check: no environment: $venv/bin/python is missing. The admin prepares it" \
    "once (deploy/README.md); set DLHACK_HOME or DLHACK_VENV to where it is." >&2
  exit 5
fi
export PATH="$(cd "$venv" && pwd)/bin:$PATH"  # the environment's mpiexec matches its mpi4py

if [ $cpu = no ] && ! python -c "
import cupy
n = cupy.cuda.runtime.getDeviceCount()
assert n > 0, 'no device'
assert int((cupy.arange(4) + 1).sum()) == 10  # compiles a kernel: needs NVRTC from CUDA 12.x
print('CuPy', cupy.__version__, 'sees', n, 'GPU(s)')
"; then
  echo "gpu_check: no CuPy: CuPy does not import, sees no GPU or cannot compile a kernel." >&2
  echo "gpu_check: the admin installs it into the course's environment:" \
    "pip install -c constraints.txt '.[gpu]' (deploy/README.md)." >&2
  echo "gpu_check: CuPy 13 needs the CUDA 12.x toolkit: module load cuda/12.x or CUDA_PATH." >&2
  exit 4
fi

mkdir -p "$out"
gpu=(--gpu)
[ $cpu = yes ] && gpu=()
common=(--eval-every 0 --n-eval 50 --no-progress --n-train "${DLHACK_N_TRAIN:-4000}")
echo "== 20 training steps on ${gpu:+GPU 0}${gpu:-the CPU}"
timeout 120 dlhack train "${gpu[@]}" --iterations 20 "${common[@]}" --out "$out/smoke"

echo "== allreduce on ${gpu:+CuPy}${gpu:-numpy} arrays"
timeout 60 mpiexec -n 1 python "$home/jobs/gpu_allreduce.py"
if [ "$gpus" -ge 2 ] || [ $cpu = yes ]; then
  timeout 60 mpiexec -n 2 python "$home/jobs/gpu_allreduce.py"
fi

echo "== throughput (one ${gpu:+GPU}${gpu:-CPU process}, batch 64, ${DLHACK_ITERATIONS:-200} iterations)"
for model in "128 2" "256 3"; do
  set -- $model
  timeout 150 dlhack train "${gpu[@]}" --iterations "${DLHACK_ITERATIONS:-200}" --units "$1" \
    --layers "$2" "${common[@]}" --out "$out/u$1_l$2" >"$out/u$1_l$2.log"
  python -c "import json, sys; m = json.load(open(sys.argv[1]))
print(f\"{m['units']} units x {m['layers']} layers: {m['sentences_per_sec']:.0f} sentences/s\")
" "$out/u$1_l$2/metrics.json"
done
echo "gpu_check: all passed"
