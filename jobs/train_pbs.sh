#!/bin/bash
# Data-parallel training on 2 nodes x 2 GPUs under PBS Pro: one rank per GPU, 4 ranks.
#
#   qsub jobs/train_pbs.sh                        # from the repository root (a shared disk)
#   qsub -v DLHACK_ARGS="--units 256 --layers 3" jobs/train_pbs.sh
#
# The job is restartable: it snapshots every 500 iterations into a fixed OUT and starts with
# --resume auto, so submitting it again after a crash or a walltime kill carries on from the
# newest valid snapshot (see src/dlhack/snapshot.py).
#
# Assumes: the repository and its .venv (`make venv`, then
# `.venv/bin/pip install -c constraints.txt --no-build-isolation -e '.[gpu]'`) on a file system
# that every node sees; ssh between the job's nodes (the mpich wheel's mpiexec starts its proxy
# on the other nodes with ssh; it has no PBS launcher); CUDA 12.x as a module.
# Tested: `bash -n` only (tests/cluster/test_jobs.py). It has not run under PBS: the select line
# and the module names differ between sites, so check them against your site's documentation.
#PBS -N dlhack-train
#PBS -l select=2:ncpus=16:ngpus=2:mpiprocs=2
#PBS -l walltime=01:00:00
#PBS -j oe
set -euo pipefail
cd "${PBS_O_WORKDIR:-$PWD}"

# module load cuda/12.4       # the site's names; CuPy 13 needs the CUDA 12.x toolkit
. .venv/bin/activate          # or the site's MPI instead of the mpich wheel: jobs/README.md
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
export CHAINERMN_FORCE_ABORT_ON_EXCEPTION=1   # one rank's exception ends the job (lesson 8)
export NCCL_DEBUG=WARN        # NCCL says why it fails; INFO shows the transport it chose

# $PBS_NODEFILE lists each node once per mpiproc; hydra wants "host:ranks", in node order.
hostfile=$(mktemp)
awk '!($1 in n) {order[k++] = $1} {n[$1]++} END {for (i = 0; i < k; i++) print order[i] ":" n[order[i]]}' \
  "$PBS_NODEFILE" >"$hostfile"
ranks=$(wc -l <"$PBS_NODEFILE")
echo "ranks: $ranks on $(cut -d: -f1 "$hostfile" | paste -sd' ')"

# Rank r takes GPU intra_rank % the GPUs it sees (its place among the ranks on its node, in
# the node's GPUs): each node sees both (CUDA_VISIBLE_DEVICES=0,1 or unset), or each rank its
# own; ranks that would share one GPU stop with a LayoutError naming them.
mpiexec -n "$ranks" -f "$hostfile" \
  dlhack train --gpu --communicator chainermn:pure_nccl \
  --snapshot-every 500 --resume auto --out "${DLHACK_OUT:-result/train_pbs}" \
  --no-progress ${DLHACK_ARGS:-}
rm -f "$hostfile"
