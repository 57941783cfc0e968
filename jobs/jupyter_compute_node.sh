#!/bin/bash
# JupyterLab on a compute node, reached from your laptop through an SSH tunnel.
#
#   sbatch jobs/jupyter_compute_node.sh           # Slurm (the #SBATCH lines below)
#   qsub jobs/jupyter_compute_node.sh             # PBS (the #PBS lines below)
#   jobs/jupyter_compute_node.sh [JUPYTER ARGS]   # or inside an interactive job
#
# It prints, into the job's output, the tunnel command to run on the laptop and the URL to
# open. JupyterLab listens on 127.0.0.1 of the compute node only, with a fresh token, and the
# tunnel hops through the login node (ssh -J), so nobody else on the cluster can reach it.
# Sites that forbid ssh into compute nodes: set DLHACK_JUPYTER_IP to the node's address (see
# jobs/README.md) and tunnel to that address through the login node instead.
# Cells can run MPI with the %%mpiexec magic (%load_ext dlhack).
# Tested: the start-up on the course's build machine without a scheduler (it printed the
# instructions and served the lab); not under Slurm or PBS. LOGIN_HOST below is yours to set.
#SBATCH --job-name=dlhack-jupyter
#SBATCH --nodes=1
#SBATCH --gpus-per-node=1
#SBATCH --time=04:00:00
#SBATCH --output=%x-%j.out
#PBS -N dlhack-jupyter
#PBS -l select=1:ncpus=8:ngpus=1
#PBS -l walltime=04:00:00
#PBS -j oe
set -euo pipefail
cd "${SLURM_SUBMIT_DIR:-${PBS_O_WORKDIR:-$(dirname "$0")/..}}"
. .venv/bin/activate
export OMP_NUM_THREADS=${OMP_NUM_THREADS:-1} OPENBLAS_NUM_THREADS=${OPENBLAS_NUM_THREADS:-1}

login=${LOGIN_HOST:-login.your-cluster.example}
ip=${DLHACK_JUPYTER_IP:-127.0.0.1}
port=$(python -c 'import socket; s = socket.socket(); s.bind(("", 0)); print(s.getsockname()[1])')
token=$(python -c 'import secrets; print(secrets.token_hex(24))')
node=$(hostname)
user=${USER:-$(id -un)}

if [ "$ip" = 127.0.0.1 ]; then  # only the node itself can connect: hop onto it
  tunnel="ssh -N -L 8888:127.0.0.1:$port -J $user@$login $user@$node"
else                            # the login node connects to the node's address
  tunnel="ssh -N -L 8888:$ip:$port $user@$login"
fi
cat <<INFO
JupyterLab on $node, port $port. On your laptop run:

    $tunnel

then open http://localhost:8888/lab?token=$token
(Stop it with scancel/qdel, or Ctrl-C in an interactive job.)
INFO

exec jupyter lab --no-browser --ip="$ip" --port="$port" --IdentityProvider.token="$token" \
  --notebook-dir=. "$@"  # extra arguments go to jupyter lab
