#!/bin/bash
# An `ssh` stand-in for MPICH's hydra, used by fake_cluster.sh (see jobs/README.md).
#
# hydra starts its proxy on a remote host as `LAUNCHER -x HOST "COMMAND ARGS..."`. This script
# "connects" to HOST = 10.254.0.N by running the command inside the network namespace
# ${DLHACK_NETNS_PREFIX}$((N-1)) that fake_cluster.sh made, under a fresh UTS namespace whose
# host name is that namespace's name: each "node" has its own network stack, its own address
# and its own MPI_Get_processor_name. Tested on the course's Linux build machine (as root).
set -eu
[ "${1:-}" = "-x" ] && shift
host=$1
shift
prefix=${DLHACK_NETNS_PREFIX:-dlh}
case $host in
  10.254.0.[1-9]) node=$prefix$((${host##*.} - 1)) ;;
  *) echo "netns_ssh.sh: $host is not a fake_cluster.sh node (10.254.0.1-9)" >&2; exit 255 ;;
esac
exec ip netns exec "$node" unshare --uts bash -c "hostname $node && exec $*"
