"""Two "nodes" on this machine (jobs/fake_cluster.sh): network namespaces joined by a veth pair.

hydra starts the second node's ranks through jobs/netns_ssh.sh, so the ranks really sit in two
network stacks with two host names. Checked here: the node-aware ranks (intra/inter) that
``dlhack.parallel`` derives, an allreduce across the veth link, and that killing a rank on
the second node ends the whole job. Needs root, iproute2 and unshare; skipped otherwise (we
never install them from a test).
"""
import os
import shutil
import subprocess
import sys

import pytest
from mpijobs import ENV, KILL_DEADLINE, kill_one_rank

from tests.support import ROOT

FAKE_CLUSTER = ROOT / "jobs" / "fake_cluster.sh"
PREFIX = f"dt{os.getpid() % 100000}"  # our own namespaces: parallel runs never share them
CLUSTER_ENV = dict(ENV, DLHACK_NETNS_PREFIX=PREFIX, DLHACK_PPN="2")


def fake_cluster(*args, timeout=60):
    return subprocess.run([str(FAKE_CLUSTER), *args], env=CLUSTER_ENV, cwd=ROOT,
                          capture_output=True, text=True, timeout=timeout, check=False)


@pytest.fixture(scope="module")
def nodes():
    if os.geteuid() != 0 or not (shutil.which("ip") and shutil.which("unshare")):
        pytest.skip("needs root, iproute2 (ip) and util-linux (unshare)")
    up = fake_cluster("up")
    if up.returncode != 0:
        fake_cluster("down")
        pytest.skip(f"cannot make network namespaces here: {up.stderr.strip()}")
    yield [f"{PREFIX}0", f"{PREFIX}1"]
    fake_cluster("down")


def test_node_aware_ranks_across_namespaces(nodes):
    result = fake_cluster("run", "-n", "4", sys.executable,
                          str(ROOT / "tests" / "cluster" / "scripts" / "node_ranks.py"))
    assert result.returncode == 0, result.stdout + result.stderr
    lines = result.stdout.splitlines()
    assert lines[:4] == [f"rank 0 host {nodes[0]} intra 0/2 inter 0/2",
                         f"rank 1 host {nodes[0]} intra 1/2 inter 0/2",
                         f"rank 2 host {nodes[1]} intra 0/2 inter 1/2",
                         f"rank 3 host {nodes[1]} intra 1/2 inter 1/2"]
    assert lines[4] == "allreduce ok"


def test_killed_rank_on_the_other_node_ends_the_job(nodes, tmp_path):
    out = tmp_path / "run"
    command = [str(FAKE_CLUSTER), "run", "-n", "4", sys.executable, "-m", "dlhack.train",
               "--iterations", "300", "--snapshot-every", "5", "--eval-every", "0",
               "--n-eval", "8", "--units", "16", "--layers", "1", "--n-train", "400",
               "--no-progress", "--out", str(out)]
    seconds, returncode, survivors, output = kill_one_rank(command, out, rank=3,
                                                           env=CLUSTER_ENV)
    print(f"kill rank 3 on {nodes[1]} -> job ended after {seconds:.2f} s, exit {returncode}")
    assert returncode not in (None, 0), output
    assert not survivors and seconds < KILL_DEADLINE, output
