#!/bin/bash
# Two "nodes" on one Linux machine, to try multi-node MPI without a cluster.
#
#   jobs/fake_cluster.sh up                       # as root: namespaces dlh0 and dlh1
#   jobs/fake_cluster.sh run -n 4 python -m dlhack.train --iterations 20 ...
#   jobs/fake_cluster.sh down
#
# Each node is a Linux network namespace (its own loopback, one end of a veth pair, address
# 10.254.0.1 or 10.254.0.2; these addresses exist only inside the two namespaces). `run` starts
# mpiexec on node dlh0 and lets hydra "ssh" to 10.254.0.2 through jobs/netns_ssh.sh, which
# enters namespace dlh1 instead. Ranks on different nodes then talk through the veth pair
# (MPICH's UCX netmod over TCP), and MPI_Get_processor_name says dlh0 or dlh1, so
# intra_rank/inter_rank come out as on two real nodes.
#
# Needs root, iproute2 (`ip`) and util-linux (`unshare`); nothing is installed here. Tested on
# the course's build machine (Linux, mpich 5.0.2 wheel): see jobs/README.md for the output.
# DLHACK_NETNS_PREFIX renames the namespaces (default dlh); DLHACK_PPN sets ranks per node (2).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
prefix=${DLHACK_NETNS_PREFIX:-dlh}
ppn=${DLHACK_PPN:-2}
export DLHACK_NETNS_PREFIX=$prefix  # netns_ssh.sh maps addresses to these names

case ${1:-} in
  up)
    for n in 0 1; do ip netns add "$prefix$n"; done
    ip link add "${prefix}veth0" netns "${prefix}0" type veth peer name "${prefix}veth1" \
      netns "${prefix}1"
    for n in 0 1; do
      ip -n "$prefix$n" addr add "10.254.0.$((n + 1))/24" dev "${prefix}veth$n"
      ip -n "$prefix$n" link set lo up
      ip -n "$prefix$n" link set "${prefix}veth$n" up
    done
    echo "nodes ${prefix}0 (10.254.0.1) and ${prefix}1 (10.254.0.2) are up"
    ;;
  down)
    for n in 0 1; do ip netns del "$prefix$n" 2>/dev/null || true; done  # takes the veth along
    ;;
  run)
    shift
    # -localhost: the proxies reach mpiexec at dlh0's address (the machine's host name would
    # resolve to a loopback that dlh1 cannot reach).
    exec ip netns exec "${prefix}0" unshare --uts bash -c 'hostname "$0" && exec "$@"' \
      "${prefix}0" mpiexec -localhost 10.254.0.1 -launcher ssh \
      -launcher-exec "$here/netns_ssh.sh" -hosts "10.254.0.1:$ppn,10.254.0.2:$ppn" "$@"
    ;;
  *)
    echo "usage: $0 up | down | run MPIEXEC_ARGS..." >&2
    exit 2
    ;;
esac
