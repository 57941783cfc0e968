"""Exercise 1 of lab 06: ``select_device(comm, n_gpus)``, the device each rank uses.

The communicator is a stand-in with ChainerMN's ``rank``, ``size``, ``intra_rank`` and
``intra_size``, on pretend nodes laid out in blocks (ranks 0, 1 on node 0) and round-robin
(ranks 0, 2 on node 0), with drawn node sizes and GPU counts: an answer that only works for one
layout, or for two ranks and two GPUs a node, earns nothing. Then ChainerMN's own communicator
on the grader's simulated hosts (2 nodes x 2 ranks, block and round-robin placement: the
``hosts=`` marker), so that the answer meets what a cluster job gives it. The rule is the
library's (dlhack.parallel.devices): GPU ``intra_rank % n_gpus``, ``n_gpus`` being the GPUs a
rank sees.
"""
from types import SimpleNamespace

import numpy as np
import pytest
from lab06 import node_comm, place
from labtools import drawn, lifted


def hint(got, node, n_gpus, everyone):
    if got == "@cupy:0" and all(device == "@cupy:0" for _, device in everyone):
        return ": every rank picks GPU 0, so the ranks of a node share one GPU and the others idle"
    if got == f"@cupy:{node.rank}" and node.rank != node.intra_rank:
        return (f": that is comm.rank ({node.rank}), which counts ranks over every node; this "
                f"node's GPUs are numbered from 0, so use the rank's place on its node")
    if got == f"@cupy:{node.inter_rank}" and node.inter_rank != node.intra_rank % n_gpus:
        return (f": that is the node's number ({node.inter_rank}), not the rank's place on it "
                f"(comm.intra_rank)")
    if got == f"@cupy:{node.intra_rank}" and n_gpus <= node.intra_rank:
        return (f": this rank sees {n_gpus} GPU(s), numbered from 0: intra_rank "
                f"{node.intra_rank} is past them; take GPU intra_rank % n_gpus (with one GPU "
                f"each, every rank's own GPU is its GPU 0)")
    for name, value in (("comm.rank % n_gpus", node.rank % n_gpus),
                        ("comm.rank % comm.intra_size", node.rank % node.intra_size)):
        if got == f"@cupy:{value}":
            return (f": that is {name} ({value}), the rank's place on its node only when each "
                    f"node holds consecutive ranks; with ranks dealt round-robin it is not "
                    f"(use comm.intra_rank)")
    return ""


def device_of(submission, comm, layout, n_gpus, ranks_per_node):
    """What ``select_device`` returned on this rank (or the ValueError it raised), as a string."""
    return selected(submission, node_comm(comm, ranks_per_node=ranks_per_node, layout=layout),
                    n_gpus)


def selected(submission, node, n_gpus):
    try:
        got = submission.select_device(node, n_gpus)
    except ValueError as err:
        return f"ValueError: {err}"
    return got if isinstance(got, str) else repr(got)


def placement_problem(devices, size, layout, n_gpus, ranks_per_node):
    """None, or what is wrong with the first rank whose device (``devices[rank]``) is wrong."""
    where = (f"with {size} ranks laid out {layout}, at most {ranks_per_node} a node, each "
             f"rank seeing {n_gpus} GPU(s)")
    return devices_problem(devices, [place(r, size, ranks_per_node, layout) for r in range(size)],
                           n_gpus, where)


def devices_problem(devices, places, n_gpus, where):
    """``placement_problem`` for ranks placed as ``places`` say (``lab06.place``'s fields)."""
    everyone = list(zip(places, devices))
    for other, device in everyone:
        want = f"@cupy:{other.intra_rank % n_gpus}"
        if device.startswith("ValueError"):
            why = ("each rank sees its own GPU 0, which nobody shares" if n_gpus == 1 else
                   f"{other.intra_size} rank(s) on its node fit the {n_gpus} GPUs each sees")
            return f"{where}, rank {other.rank} raised {device}: {why}"
        if device != want:
            return (f"{where}, rank {other.rank} (intra_rank {other.intra_rank} on node "
                    f"{other.inter_rank}) got {device!r}, expected {want!r}"
                    + hint(device, other, n_gpus, everyone))
    return None


def drawn_layouts(seed, size, n=4):
    """(layout, n_gpus, ranks_per_node): GPUs per rank 1 to 4, at most that many ranks a node."""
    rng = np.random.RandomState(seed)
    out = []
    for _ in range(n):
        n_gpus = int(rng.randint(1, 5))
        most = min(size, n_gpus) if n_gpus > 1 else size
        out.append((["block", "round-robin"][rng.randint(2)], n_gpus, int(rng.randint(1, most + 1))))
    return out


def layouts(seed, size):
    """Two ranks and two GPUs a node, then one GPU seen by each rank (--gpus-per-task=1), in
    blocks and round-robin; then drawn layouts."""
    fixed = [(layout, n_gpus, 2) for n_gpus in (2, 1) for layout in ("block", "round-robin")]
    return fixed + drawn_layouts(seed, size)


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3, 4], timeout=20)
def test_one_gpu_per_rank_of_each_node(submission, comm, observe, seed):
    """Fixed and drawn layouts of nodes and GPUs: GPU intra_rank % n_gpus on every rank."""
    observe(devices=[device_of(submission, comm, *case) for case in layouts(seed, comm.size)])


def check_one_gpu_per_rank_of_each_node(obs, run):
    everyone = [run.observed(r)["devices"] for r in range(run.size)]
    for i, case in enumerate(layouts(run.seed, run.size)):
        problem = placement_problem([devices[i] for devices in everyone], run.size, *case)
        if problem:
            return problem + (drawn(run.seed) if i >= 4 else "")
    return None


@pytest.mark.points(1)
@pytest.mark.mpi(ranks=[3], timeout=20)
def test_cpu_and_too_few_gpus(submission, comm, observe):
    """No GPU: "@numpy". Three ranks on a node whose ranks see two GPUs: a ValueError on every
    rank. One rank per node: GPU 0."""
    cpu = device_of(submission, comm, "block", 0, comm.size)  # every rank on one node
    short = device_of(submission, comm, "block", comm.size - 1, comm.size)  # one GPU short
    observe(cpu=cpu, short=short, alone=device_of(submission, comm, "round-robin", 2, 1))


def check_cpu_and_too_few_gpus(obs, run):
    if obs["cpu"] != "@numpy":
        return f"with n_gpus=0 every rank runs on the CPU: expected '@numpy', got {obs['cpu']!r}"
    shorts = [run.observed(r)["short"] for r in range(run.size)]
    returned = [r for r, got in enumerate(shorts) if not got.startswith("ValueError")]
    if returned:
        return (f"{run.size} ranks on one node, each seeing {run.size - 1} GPUs: expected "
                f"ValueError (two ranks would share a GPU) on every rank of the node, but "
                f"select_device returned on rank(s) {returned}: check intra_size, which every "
                f"rank of the node shares, not the rank's own place, so that no rank goes on alone")
    return placement_problem([run.observed(r)["alone"] for r in range(run.size)], run.size,
                             "round-robin", 2, 1)


def chainermn_comm(comm):
    """ChainerMN's own naive communicator on ``comm``: it asks MPI for each rank's host, which
    the grader's shim answers with the test's simulated hosts."""
    with lifted():  # the lab's block on chainermn is for the answers, not for the test
        import chainermn

        return chainermn.create_communicator("naive", comm)


def places_on(hosts):
    """Each rank's place as ChainerMN computes it from ``hosts`` (a host per rank)."""
    order = list(dict.fromkeys(hosts))
    return [SimpleNamespace(rank=r, size=len(hosts), inter_rank=order.index(host),
                            intra_rank=[i for i, h in enumerate(hosts) if h == host].index(r),
                            intra_size=hosts.count(host), inter_size=len(order))
            for r, host in enumerate(hosts)]


HOSTS_GPUS = (2, 4, 1)  # a node's two GPUs, four, one of its own


@pytest.mark.points(0.5)
@pytest.mark.mpi(ranks=[4], hosts=2, timeout=30)
@pytest.mark.parametrize("placement", ["block", "round_robin"])
def test_chainermn_on_two_nodes(submission, comm, observe, placement):
    """4 ranks on 2 simulated nodes, placed in blocks and round-robin, through ChainerMN's own
    communicator: each rank seeing its node's 2 GPUs, 4, or 1 of its own."""
    node = chainermn_comm(comm)
    observe(intra_rank=node.intra_rank,
            devices=[selected(submission, node, n_gpus) for n_gpus in HOSTS_GPUS])


def check_chainermn_on_two_nodes(obs, run):
    places = places_on(run.hosts)
    if obs["intra_rank"] != places[run.rank].intra_rank:  # the grader's simulation, not the answer
        raise RuntimeError(f"ChainerMN saw intra_rank {obs['intra_rank']} on rank {run.rank}, "
                           f"the simulated hosts {run.hosts} say {places[run.rank].intra_rank}")
    everyone = [run.observed(r)["devices"] for r in range(run.size)]
    for i, n_gpus in enumerate(HOSTS_GPUS):
        where = (f"on 2 nodes with the ranks placed {run.params['placement'].replace('_', '-')} "
                 f"(hosts {run.hosts}), through ChainerMN's communicator, each rank seeing "
                 f"{n_gpus} GPU(s)")
        problem = devices_problem([devices[i] for devices in everyone], places, n_gpus, where)
        if problem:
            return problem
    return None
