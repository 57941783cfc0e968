#!/bin/bash
# JupyterLab on a compute node, reached from your laptop through an SSH tunnel.
#
#   sbatch jobs/jupyter_compute_node.sh           # Slurm (the #SBATCH lines below)
#   qsub jobs/jupyter_compute_node.sh             # PBS (the #PBS lines below)
#   jobs/jupyter_compute_node.sh [JUPYTER ARGS]   # or inside an interactive job
#
# It is the course's JupyterLab (`dlhack lab`: one kernel, saving only inside your copy of the
# lessons and labs, ~/dlhack, nbgrader's instructor tools hidden). It prints, into the job's
# output, the tunnel command to run on the laptop; the URL to open, with its token, goes to
# ~/.dlhack/jupyter-JOB.url, which only you can read. The token reaches JupyterLab through its
# environment (JUPYTER_TOKEN), never its command line, which every user of the node can see.
# JupyterLab listens on 127.0.0.1 of the compute node only, and the tunnel hops through the
# login node (ssh -J), so nobody else on the cluster can reach it. Sites that forbid ssh into
# compute nodes: set DLHACK_JUPYTER_IP to the node's address (see jobs/README.md) and tunnel to
# that address through the login node instead. Settings, in the environment:
#   DLHACK_HOME   the course's folder (default: the folder sbatch/qsub was run from)
#   DLHACK_VENV   the environment the admin prepared (default: DLHACK_HOME/.venv)
#   LOGIN_HOST    your cluster's login node, so that the printed command is complete
# Cells can run MPI with the %%mpiexec magic (%load_ext dlhack).
# Tested: under a private Slurm (tests/cluster/test_jobs_slurm.py: the URL file, the token kept
# off the command line, the server answering only with the token, scancel stopping it); not
# under PBS.
#SBATCH --job-name=dlhack-jupyter
#SBATCH --nodes=1
#SBATCH --cpus-per-task=8   # sbatch reads the #PBS lines too: keep the two the same
#SBATCH --gpus-per-node=1
#SBATCH --time=04:00:00
#SBATCH --output=%x-%j.out
#PBS -N dlhack-jupyter
#PBS -l select=1:ncpus=8:ngpus=1
#PBS -l walltime=04:00:00
#PBS -j oe
set -euo pipefail
home=${DLHACK_HOME:-${SLURM_SUBMIT_DIR:-${PBS_O_WORKDIR:-$(dirname "$0")/..}}}
. "${DLHACK_VENV:-$home/.venv}/bin/activate"
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

login=${LOGIN_HOST:-login.your-cluster.example}
ip=${DLHACK_JUPYTER_IP:-127.0.0.1}
port=$(python -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
node=$(hostname)
user=${USER:-$(id -un)}
job=${SLURM_JOB_ID:-${PBS_JOBID:-$$}}
JUPYTER_TOKEN=$(python -c 'import secrets; print(secrets.token_hex(24))')
export JUPYTER_TOKEN
urlfile="$HOME/.dlhack/jupyter-$job.url"
(umask 077 && mkdir -p "$HOME/.dlhack" && echo "http://localhost:8888/lab?token=$JUPYTER_TOKEN" \
  >"$urlfile")

if [ "$ip" = 127.0.0.1 ]; then  # only the node itself can connect: hop onto it
  tunnel="ssh -N -L 8888:127.0.0.1:$port -J $user@$login $user@$node"
else                            # the login node connects to the node's address
  tunnel="ssh -N -L 8888:$ip:$port $user@$login"
fi
cat <<INFO
JupyterLab on $node, port $port. On your laptop run:

    $tunnel

then open the URL in $urlfile (only you can read it: it holds the token).
(Stop it with scancel/qdel, or Ctrl-C in an interactive job.)
INFO

trap 'rm -f "$urlfile"' EXIT
dlhack lab --root "$HOME" --workspace "$HOME/dlhack" -- --no-browser --ip="$ip" --port="$port" \
  "$@"  # extra arguments go to jupyter lab
