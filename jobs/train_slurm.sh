#!/bin/bash
# Data-parallel training on 2 nodes x 2 GPUs under Slurm: one rank per GPU, 4 ranks.
#
#   sbatch jobs/train_slurm.sh                    # from the repository root (a shared disk)
#   sbatch --export=ALL,DLHACK_ARGS="--units 256 --layers 3" jobs/train_slurm.sh
#
# Restartable like jobs/train_pbs.sh: snapshots every 500 iterations into a fixed OUT and
# --resume auto, so `sbatch` again (or --requeue) carries on from the newest valid snapshot.
#
# Launch: the mpich wheel's mpiexec (hydra) reads the Slurm allocation itself
# (SLURM_JOB_NODELIST, SLURM_TASKS_PER_NODE) and starts one proxy per node with srun, a job
# step; the ranks get their ranks from hydra, not from Slurm's PMI. No ssh is needed. With the
# site's MPI instead (jobs/README.md) use `srun --mpi=pmix` (or pmi2) in place of mpiexec.
# Assumes: the course's environment, prepared once by the admin (deploy/README.md:
# deploy/install.sh; for GPUs also its `gpu` extra), on a file system that every node sees;
# CUDA 12.x as a module. Settings, in the environment (sbatch --export=ALL,NAME=VALUE):
#   DLHACK_HOME    the course's folder (default: the folder sbatch was run from)
#   DLHACK_VENV    the environment (default: DLHACK_HOME/.venv)
#   DLHACK_OUT     the run's folder, relative to the folder sbatch was run from (default:
#                  result/train_slurm)
#   DLHACK_ARGS    more arguments for dlhack train
#   DLHACK_DEVICE  gpu (default), or cpu: the same job without its GPU steps (no --gpu, the
#                  default CPU communicator), which is how the tests run it
# Tested: under a private Slurm of two nodes (tests/cluster/test_jobs_slurm.py) with
# DLHACK_DEVICE=cpu: 4 ranks on 2 nodes, scancel'ed after a snapshot, then submitted again and
# resumed from it. Not on GPUs; partition, account and module names are site-specific.
#SBATCH --job-name=dlhack-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --gpus-per-node=2
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=%x-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$PWD}"  # where Slurm starts the job anyway; OUT is relative to it

# module load cuda/12.4       # the site's names; CuPy 13 needs the CUDA 12.x toolkit
. "${DLHACK_VENV:-${DLHACK_HOME:-$PWD}/.venv}/bin/activate"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export CHAINERMN_FORCE_ABORT_ON_EXCEPTION=1   # one rank's exception ends the job (lesson 8)
export NCCL_DEBUG=WARN

# Rank r takes GPU intra_rank % the GPUs it sees (dlhack.parallel.devices): right whether
# every rank sees all of its node's GPUs (--gpus-per-node) or only its own (--gpus-per-task);
# ranks that would share one GPU stop with a LayoutError naming them.
device=(--gpu --communicator chainermn:pure_nccl)
[ "${DLHACK_DEVICE:-gpu}" = cpu ] && device=()
mpiexec -n "$SLURM_NTASKS" -ppn "$SLURM_NTASKS_PER_NODE" \
  dlhack train "${device[@]}" \
  --snapshot-every 500 --resume auto --out "${DLHACK_OUT:-result/train_slurm}" \
  --no-progress ${DLHACK_ARGS:-}
