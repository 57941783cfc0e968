#!/bin/bash
# Grade a class's submissions of a lab as one batch job: every notebook in a folder, each run
# sealed in the grader's sandbox (bubblewrap), the class table as CSV and the results as JSON.
#
#   sbatch jobs/grade_class.sh SUBMISSIONS/ [DLHACK GRADE OPTIONS]
#   sbatch jobs/grade_class.sh submitted/02_collectives/ --lab 02_collectives
#
# Writes, in the folder sbatch was run from: grades-JOB.csv (a row per learner) and
# grades-JOB.json (every result), and the feedback in the job's output. Options after the folder
# go to `dlhack grade` (its --help lists them). Settings, in the environment:
#   DLHACK_HOME   the course's folder (default: the folder sbatch was run from)
#   DLHACK_VENV   the environment the admin prepared (default: DLHACK_HOME/.venv)
# The grader runs up to --slots ranks at once (default: the machine's core count, at least
# 4); ask for that many CPUs (--cpus-per-task below) or pass --slots to match what you ask for.
# The compute node needs bubblewrap and user namespaces (`dlhack doctor` says so): without
# them the grader refuses, it never grades untrusted notebooks unsealed.
# Tested: under a private Slurm (tests/cluster/test_jobs_slurm.py), a right and a wrong
# submission of lab 02.
#SBATCH --job-name=dlhack-grade
#SBATCH --nodes=1
#SBATCH --ntasks=1
#SBATCH --cpus-per-task=4
#SBATCH --time=01:00:00
#SBATCH --output=%x-%j.out
set -euo pipefail
folder=${1:?usage: sbatch jobs/grade_class.sh SUBMISSIONS/ [DLHACK GRADE OPTIONS]}
shift
cd "${SLURM_SUBMIT_DIR:-$PWD}"
. "${DLHACK_VENV:-${DLHACK_HOME:-$PWD}/.venv}/bin/activate"
export OMP_NUM_THREADS=1 OPENBLAS_NUM_THREADS=1
job=${SLURM_JOB_ID:-$$}
# Every graded run stays on this node, in a sandbox without network: its mpiexec must start the
# ranks itself. The mpich wheel's hydra sees an allocation in SLURM_JOB_NODELIST (or
# SLURM_NODELIST) with SLURM_TASKS_PER_NODE and would start them through srun, which cannot
# reach slurmctld from inside the sandbox: every test would time out. Hidden from it here.
unset SLURM_JOB_NODELIST SLURM_NODELIST SLURM_TASKS_PER_NODE
dlhack grade "$folder" --csv "grades-$job.csv" --json "grades-$job.json" "$@"
