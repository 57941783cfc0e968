#!/bin/bash
# Data-parallel training on 2 nodes x 2 GPUs under Slurm: one rank per GPU, 4 ranks.
#
#   sbatch jobs/train_slurm.sh                    # from the repository root (a shared disk)
#   sbatch --export=ALL,DLHACK_ARGS="--units 256 --layers 3" jobs/train_slurm.sh
#
# Restartable like jobs/train_pbs.sh: snapshots every 500 iterations into a fixed OUT and
# --resume auto, so `sbatch` again (or --requeue) carries on from the newest valid snapshot.
#
# Launch: the mpich wheel's mpiexec (hydra) reads the Slurm allocation itself and starts its
# proxies with srun, so no ssh is needed. With the site's MPI instead (jobs/README.md) use
# `srun --mpi=pmix` (or pmi2, as the site's MPI was built) in place of mpiexec.
# Assumes: the repository and its .venv (`make venv`, then
# `.venv/bin/pip install -c constraints.txt --no-build-isolation -e '.[gpu]'`) on a file system
# that every node sees; CUDA 12.x as a module.
# Tested: `bash -n` only (tests/cluster/test_jobs.py). It has not run under Slurm; partition,
# account and module names are site-specific.
#SBATCH --job-name=dlhack-train
#SBATCH --nodes=2
#SBATCH --ntasks-per-node=2
#SBATCH --gpus-per-node=2
#SBATCH --cpus-per-task=8
#SBATCH --time=01:00:00
#SBATCH --output=%x-%j.out
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-$PWD}"

# module load cuda/12.4       # the site's names; CuPy 13 needs the CUDA 12.x toolkit
. .venv/bin/activate
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export CHAINERMN_FORCE_ABORT_ON_EXCEPTION=1   # one rank's exception ends the job (lesson 8)
export NCCL_DEBUG=WARN

# Rank r uses GPU intra_rank, so every rank on a node must see all of the node's GPUs:
# --gpus-per-node (not --gpus-per-task, which would show each rank only "its" GPU 0).
mpiexec -n "$SLURM_NTASKS" -ppn "$SLURM_NTASKS_PER_NODE" \
  dlhack train --gpu --communicator chainermn:pure_nccl \
  --snapshot-every 500 --resume auto --out "${DLHACK_OUT:-result/train_slurm}" \
  --no-progress ${DLHACK_ARGS:-}
