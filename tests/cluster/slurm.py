"""A private Slurm for the tests: munge, slurmctld and slurmd from Debian, in a temporary folder.

    with Slurm(nodes=1, cpus=8) as cluster:        # as root; ~3 s to start, ~2 s to stop
        job = cluster.sbatch("--wrap", "hostname", user="someone", cwd="/tmp")
        assert cluster.wait_job(job)["JobState"] == "COMPLETED"

Everything lives in one folder made for it, /tmp/dlhack-slurm-XXXX (readable by the learners
the tests create, so their jobs reach the munge socket and slurm.conf): munge's key (owned by
``munge``) and socket, slurm.conf and gres.conf, the controller's state, the nodes' spools and
every log. Nothing under /etc is read or written; every client command gets ``SLURM_CONF``.
Daemons run as root with ``ProctrackType=proctrack/linuxproc`` and ``TaskPlugin=task/none`` (no
cgroups needed), on free ports (slurmconf.py writes the configuration and says why each line).
Nodes declare ``cpus`` CPUs whatever the machine has and ``gpus`` stand-in GPUs: jobs that ask
for GPUs are scheduled, and their GPU steps must be replaced by CPU ones (jobs/README.md).

``nodes=2`` makes two nodes in network namespaces (``jobs/fake_cluster.sh up``, 10.254.0.1 and
10.254.0.2), each with its own host name and an /etc/hosts of its own that names both; the
controller runs on the first, and every client command runs inside it too.

:meth:`Slurm.stop` cancels what is left, shuts the daemons down and asserts that no process
that carries this cluster's ``SLURM_CONF`` (daemons, job steps, whatever jobs started) outlives
it; then it removes the folder and the namespaces.
"""
import os
import re
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import slurmconf

from tests.support import ROOT

FAKE_CLUSTER = ROOT / "jobs" / "fake_cluster.sh"
NEEDED = ("slurmctld", "slurmd", "sbatch", "munged", "mungekey", "runuser", "setpriv")
FINAL = ("COMPLETED", "FAILED", "CANCELLED", "TIMEOUT", "NODE_FAIL", "OUT_OF_MEMORY",
         "PREEMPTED", "BOOT_FAIL", "DEADLINE")


IN_CI = os.environ.get("CI") == "true"


def require(reason):
    """Skip the test when ``reason`` (why it cannot run) is set; in CI (CI=true), fail instead."""
    import pytest

    if reason and IN_CI:
        pytest.fail(f"CI=true, but: {reason}")
    if reason:
        pytest.skip(reason)


def unavailable(nodes=1):
    """None when a private Slurm can start here; else why not (what to install or be)."""
    if os.geteuid() != 0:
        return "a private Slurm needs root (munge's key is owned by the munge user)"
    missing = [c for c in NEEDED if shutil.which(c) is None]
    if missing:
        return (f"missing {', '.join(missing)}: `make test` as root installs slurm-wlm and munge "
                f"(deploy/system-packages.sh)")
    if nodes > 1 and not (shutil.which("ip") and shutil.which("unshare")):
        return "two nodes need iproute2 (ip) and util-linux (unshare)"
    return None


def free_ports(n):
    """``n`` TCP ports free on 127.0.0.1 right now."""
    socks = [socket.socket() for _ in range(n)]
    try:
        for s in socks:
            s.bind(("127.0.0.1", 0))
        return [s.getsockname()[1] for s in socks]
    finally:
        for s in socks:
            s.close()


class Service:
    """Something the tests start and stop: ``with`` starts it, and stops it however the block
    ends, checking that nothing is left only when the block raised nothing (a failed start is
    cleaned up without the check, so that its own error is the one reported)."""

    def __enter__(self):
        try:
            self.start()
        except BaseException:
            self.stop(check=False)
            raise
        return self

    def __exit__(self, *exc):
        self.stop(check=exc[0] is None)


class Slurm(Service):
    """One private Slurm cluster: ``nodes`` nodes of ``cpus`` CPUs and ``gpus`` stand-in GPUs."""

    def __init__(self, nodes=1, cpus=4, gpus=2, partition="debug"):
        self.nodes, self.cpus, self.gpus, self.partition = nodes, cpus, gpus, partition
        self.dir = Path(tempfile.mkdtemp(prefix="dlhack-slurm-"))
        self.dir.chmod(0o755)
        self.conf = self.dir / "slurm.conf"
        self.netns = f"dls{os.getpid() % 100000}" if nodes > 1 else None
        if self.netns:
            self.names = [f"{self.netns}{i}" for i in range(nodes)]
            self.addrs = [f"10.254.0.{i + 1}" for i in range(nodes)]
        else:  # the machine's own name: the hub reaches a server at the host squeue reports
            self.names, self.addrs = [socket.gethostname().split(".")[0]], ["127.0.0.1"]
        self.env = dict(os.environ, SLURM_CONF=str(self.conf))
        self._daemons = []  # Popen of munged, slurmctld, each slurmd: run in the foreground and
        # reaped here (the machine's init may not reap a daemon that forked itself away)

    # -- start and stop ------------------------------------------------------------------
    def start(self, timeout=60):
        if self.netns:
            subprocess.run([str(FAKE_CLUSTER), "up"], env=self._netns_env(), check=True,
                           capture_output=True, text=True)
            (self.dir / "hosts").write_text("127.0.0.1 localhost\n" + "".join(
                f"{a} {n}\n" for a, n in zip(self.addrs, self.names)))
        self._start_munge()
        self._write_conf()
        self._daemon(0, ["slurmctld", "-D"])
        for i, name in enumerate(self.names):
            (self.dir / "spool" / name).mkdir(parents=True)
            self._daemon(i, ["slurmd", "-D", "-N", name])
        deadline = time.monotonic() + timeout
        while True:
            out = self.run(["sinfo", "-h", "-N", "-o", "%N %t"], check=False).stdout
            if out.split().count("idle") == self.nodes:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(f"Slurm did not come up: sinfo says {out!r}\n{self.logs()}")
            time.sleep(0.5)

    def stop(self, check=True, timeout=60):
        """Cancel every job, stop the daemons, and (``check``) assert that nothing is left."""
        left = []
        if self.conf.exists():
            jobs = self.squeue()
            if jobs:
                self.run(["scancel", *[j["id"] for j in jobs]], check=False)
                self._wait(lambda: not self.squeue(), timeout, "jobs to end")
            left = [f"job {j['id']} ({j['name']}, {j['user']})" for j in jobs]
            self.run(["scontrol", "shutdown"], check=False)
            self._wait(lambda: not self.processes(), timeout, "Slurm's processes to end")
        survivors = self.processes()
        for pid in survivors:
            _kill(pid)
        for daemon in reversed(self._daemons):  # munged last: the others sign with it
            if daemon.poll() is None:
                daemon.terminate()
            try:
                daemon.wait(timeout=10)
            except subprocess.TimeoutExpired:
                daemon.kill()
                daemon.wait()
        if self.netns:
            subprocess.run([str(FAKE_CLUSTER), "down"], env=self._netns_env(), check=False)
        logs = self.logs()
        shutil.rmtree(self.dir, ignore_errors=True)
        if check:
            assert not left, f"jobs were still queued or running at the end: {left}"
            assert not survivors, f"processes outlived the cluster: {survivors}\n{logs}"
        return left

    def _wait(self, done, timeout, what):
        deadline = time.monotonic() + timeout
        while not done() and time.monotonic() < deadline:
            time.sleep(0.3)

    def processes(self):
        """Pids of every process started under this cluster (its SLURM_CONF in the environment).

        Daemons, slurmstepd, job scripts and whatever they started all inherit it; the only
        exception, munged, is not counted here.
        """
        needle = f"SLURM_CONF={self.conf}\0".encode()
        pids = []
        for entry in Path("/proc").iterdir():
            if not entry.name.isdigit() or int(entry.name) == os.getpid():
                continue
            try:
                if needle in (entry / "environ").read_bytes():
                    pids.append(int(entry.name))
            except OSError:
                continue
        return pids

    def logs(self):
        """The tail of every daemon log, for failure messages."""
        parts = []
        for log in sorted((self.dir / "log").glob("*.log")) if (self.dir / "log").exists() else []:
            parts.append(f"--- {log.name}\n" + "\n".join(log.read_text().splitlines()[-15:]))
        return "\n".join(parts)

    # -- set-up --------------------------------------------------------------------------
    def _netns_env(self):
        return dict(os.environ, DLHACK_NETNS_PREFIX=self.netns)

    def _start_munge(self):
        munge = self.dir / "munge"
        (munge / "key").mkdir(parents=True)
        key = munge / "key" / "munge.key"
        subprocess.run(["mungekey", "--create", f"--keyfile={key}"], check=True)
        shutil.chown(munge, "munge", "munge")
        shutil.chown(munge / "key", "munge", "munge")
        shutil.chown(key, "munge", "munge")
        munge.chmod(0o755)  # everyone reaches the socket; only munge reads the key
        (munge / "key").chmod(0o700)
        key.chmod(0o600)
        self._daemons.append(subprocess.Popen(
            ["setpriv", "--reuid=munge", "--regid=munge", "--init-groups", "munged", "--foreground",
             f"--socket={self.socket}",
             f"--key-file={key}", f"--pid-file={munge / 'munged.pid'}",
             f"--log-file={munge / 'munged.log'}", f"--seed-file={munge / 'munged.seed'}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True))
        self._wait(self.socket.exists, 20, "munged")

    @property
    def socket(self):
        return self.dir / "munge" / "munge.socket"

    def _write_conf(self):
        (self.dir / "log").mkdir()
        (self.dir / "state").mkdir()
        ports = free_ports(2) if not self.netns else (6817, 6818)  # namespaces: all ports free
        slurmconf.write(self.dir, self.names, self.addrs, self.cpus, self.gpus, self.partition,
                        ports, self.socket)

    def _in_node(self, i, argv):
        """``argv`` run on node ``i``: in its namespaces (two nodes), else as it is."""
        if not self.netns:
            return list(argv)
        script = ('mount --bind "$0" /etc/hosts && hostname "$1" && shift && exec "$@"')
        # nsenter, not `ip netns exec`: that remounts /sys, without the cgroup file system
        # slurmd looks at even with proctrack/linuxproc
        return ["nsenter", f"--net=/run/netns/{self.names[i]}", "unshare", "--uts", "--mount",
                "--propagation", "private", "sh", "-c", script, str(self.dir / "hosts"),
                self.names[i], *argv]

    def _daemon(self, i, argv):
        with open(self.dir / "log" / f"{argv[0]}-{i}.out", "w") as out:
            self._daemons.append(subprocess.Popen(
                self._in_node(i, argv), env=self.env, stdout=out, stderr=subprocess.STDOUT,
                start_new_session=True))

    # -- client commands -----------------------------------------------------------------
    def command(self, argv, user=None):
        """``argv`` as a client command: inside the first node's namespace, as ``user``."""
        if user:
            argv = ["runuser", "-u", user, "--", "env", f"SLURM_CONF={self.conf}", *argv]
        if self.netns:
            argv = ["ip", "netns", "exec", self.names[0], *argv]
        return argv

    def run(self, argv, user=None, check=True, timeout=60, **kwargs):
        """Run a client command (sinfo, squeue, scancel, ...) and return the CompletedProcess."""
        kwargs.setdefault("env", self.env)
        result = subprocess.run(self.command(argv, user), capture_output=True, text=True,
                                timeout=timeout, check=False, **kwargs)
        if check and result.returncode != 0:
            raise RuntimeError(f"{' '.join(argv)} failed ({result.returncode}): "
                               f"{result.stderr.strip()}")
        return result

    def sbatch(self, *args, user=None, cwd=None, env=None):
        """Submit a job (``sbatch --parsable ARGS``) and return its id."""
        out = self.run(["sbatch", "--parsable", *map(str, args)], user=user, cwd=cwd,
                       env=dict(self.env, **(env or {}))).stdout
        return out.strip().splitlines()[-1].split(";")[0]

    def squeue(self, user=None):
        """The jobs pending or running, as dicts with id, name, user, state and nodes."""
        argv = ["squeue", "-h", "-o", "%i|%j|%u|%T|%N"] + (["-u", user] if user else [])
        out = self.run(argv, check=False).stdout
        keys = ("id", "name", "user", "state", "nodes")
        return [dict(zip(keys, line.split("|"))) for line in out.splitlines() if line.strip()]

    def job(self, job_id):
        """``scontrol show job``'s fields of one job, as a dict (empty once it is forgotten)."""
        out = self.run(["scontrol", "show", "job", "-o", str(job_id)], check=False).stdout
        return dict(re.findall(r"(\w+)=(\S*)", out))

    def wait_job(self, job_id, timeout=120, states=FINAL):
        """Until the job is in one of ``states`` (default: ended); returns its fields."""
        deadline = time.monotonic() + timeout
        while True:
            info = self.job(job_id)
            if info.get("JobState") in states:
                return info
            if time.monotonic() > deadline:
                raise TimeoutError(f"job {job_id} still {info.get('JobState')} after "
                                   f"{timeout} s\n{self.logs()}")
            time.sleep(0.5)


def _kill(pid):
    try:
        os.kill(pid, 9)
    except ProcessLookupError:
        pass
