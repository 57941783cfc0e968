"""A room under load: N learners spawn on the course's hub at once and run a check cell at once.

    sudo .venv/bin/python bench/room.py                 # 20 learners (minutes on 2 cores)
    sudo .venv/bin/python bench/room.py --learners 4 --cpus 2

As root, on this machine: a private Slurm (tests/cluster/slurm.py) of one node that declares
``learners x cpus`` CPUs whatever the machine has (Slurm then runs every server at once: on a
small machine they share its cores), the course's hub (deploy/jupyterhub_config.py, over the
environment deploy/install.sh builds), and N local Unix users. Through the hub's REST API, with
its service token (no browser):

1. alone: the first learner's server is spawned and lab 02's first check cell is run in it
   (a correct answer, then ``dlhack.grade.check("02_collectives", "allreduce_naive")``,
   through the kernel's websocket as JupyterLab sends it); then that server is stopped;
2. together: all N servers are spawned at once, then every learner runs the same check at once.

It prints, side by side, the time from the spawn request to a ready server and the check cell's
latency (send to reply), alone and for N together (median and worst), then what fraction of
the N checks passed (a check passes when its output says ``allreduce_naive: 3 / 3``) and why the
others failed. The grader's timeouts count on its job clock (``dlhack.jobs.clock``), which stops
while the ranks wait for a core, so N servers sharing a few cores slow the checks without
failing right answers; a failure here is a real one (or a wall cap of 10x the timeout); the exit status is 1 if any failed, and a spawn that fails stops the run. At the end
every server, job, user and daemon is stopped and removed; the teardown asserts it.
"""
import argparse
import asyncio
import json
import os
import statistics
import sys
import time
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests" / "cluster")]  # tests.support, and the fixtures
from course_env import build
from hub import Hub
from learners import Learners
from slurm import Slurm, unavailable

ANSWER = '''import numpy as np


def allreduce_naive(comm, x):
    """Sum x over all ranks through rank 0."""
    if comm.rank == 0:
        total = np.array(x, copy=True)
        buf = np.empty_like(x)
        for src in range(1, comm.size):
            comm.Recv(buf, source=src)
            total += buf
        for dst in range(1, comm.size):
            comm.Send(total, dest=dst)
        return total
    comm.Send(np.ascontiguousarray(x), dest=0)
    total = np.empty_like(x)
    comm.Recv(total, source=0)
    return total
'''
SETUP = ("import os, tempfile\nimport dlhack.grade\n"
         "os.chdir(tempfile.mkdtemp(prefix='lab02-'))")
CHECK = 'dlhack.grade.check("02_collectives", "allreduce_naive")'
PASSED = "allreduce_naive: 3 / 3"


async def spawn(hub, name, timeout=900):
    """Ask the hub for ``name``'s server; seconds until it is ready."""
    start = time.monotonic()
    await asyncio.to_thread(hub.api, "POST", f"/users/{name}/server", None, 120)
    while True:
        user = await asyncio.to_thread(hub.api, "GET", f"/users/{name}")
        server = user["servers"].get("", {})
        if server.get("ready"):
            return time.monotonic() - start
        if not server.get("pending") and not server:
            raise RuntimeError(f"{name}'s server failed to start:\n{hub.log(20)}")
        if time.monotonic() - start > timeout:
            raise TimeoutError(f"{name}'s server not ready after {timeout} s")
        await asyncio.sleep(1)


async def stop(hub, name):
    await asyncio.to_thread(hub.api, "DELETE", f"/users/{name}/server", None, 120)
    while (await asyncio.to_thread(hub.api, "GET", f"/users/{name}"))["servers"]:
        await asyncio.sleep(1)


class Kernel:
    """A kernel of ``name``'s server, driven through its websocket as JupyterLab drives it."""

    def __init__(self, hub, name, token):
        self.hub, self.name, self.token = hub, name, token
        self.session = uuid.uuid4().hex
        self.reconnects = 0  # websockets the server closed before the kernel answered

    async def start(self):
        from tornado.httpclient import AsyncHTTPClient, HTTPRequest

        self.base = f"{self.hub.url}/user/{self.name}/api/kernels"
        self.headers = {"Authorization": f"token {self.token}"}
        reply = await AsyncHTTPClient().fetch(HTTPRequest(
            self.base, method="POST", headers=self.headers,
            body=json.dumps({"name": "dlhack"}), request_timeout=300))
        self.id = json.loads(reply.body)["id"]
        await self.connect()

    async def connect(self, seconds=600):
        """Open the websocket and wait for the kernel's kernel_info reply, as JupyterLab does.

        On a loaded machine the server closes a websocket whose kernel does not answer in
        time (jupyter_server's kernel_info_timeout); JupyterLab then reconnects, and so do we.
        """
        from tornado.httpclient import HTTPRequest
        from tornado.websocket import WebSocketClosedError, websocket_connect

        url = self.base.replace("http", "ws", 1) + (f"/{self.id}/channels"
                                                    f"?session_id={self.session}")
        deadline = time.monotonic() + seconds
        while True:
            try:
                self.ws = await websocket_connect(HTTPRequest(url, headers=self.headers,
                                                              request_timeout=300))
                await self.request("kernel_info_request", {}, "kernel_info_reply", seconds)
                return
            except (WebSocketClosedError, ConnectionError, RuntimeError):
                if time.monotonic() > deadline:
                    raise
                self.reconnects += 1
                await asyncio.sleep(5)

    async def request(self, msg_type, content, reply_type, timeout):
        """Send one shell message; (seconds to its reply, the reply, what it printed)."""
        msg_id = uuid.uuid4().hex
        self.ws.write_message(json.dumps({
            "header": {"msg_id": msg_id, "username": self.name, "session": self.session,
                       "msg_type": msg_type, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": content}))
        start, text = time.monotonic(), []
        while True:
            raw = await asyncio.wait_for(self.ws.read_message(), timeout)
            if raw is None:
                raise RuntimeError(f"{self.name}'s kernel websocket closed")
            msg = json.loads(raw)
            if msg.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if msg["msg_type"] == "stream":
                text.append(msg["content"]["text"])
            elif msg["msg_type"] == "error":
                text.append("\n".join(msg["content"]["traceback"]))
            elif msg["msg_type"] == reply_type:
                return time.monotonic() - start, msg["content"], "".join(text)

    async def execute(self, code, timeout=900):
        """Run ``code``; returns (seconds to the reply, its status, the text it printed)."""
        seconds, reply, text = await self.request(
            "execute_request", {"code": code, "silent": False, "store_history": True,
                                "user_expressions": {}, "allow_stdin": False,
                                "stop_on_error": True}, "execute_reply", timeout)
        return seconds, reply["status"], text


async def check_cell(hub, name):
    """A kernel in ``name``'s server, the answer, then the check: (seconds, passed, output).

    A failure of the kernel or its websocket is a failed check too, with what went wrong.
    """
    start = time.monotonic()
    try:
        token = (await asyncio.to_thread(hub.api, "POST", f"/users/{name}/tokens",
                                         {"note": "bench", "expires_in": 3600}))["token"]
        kernel = Kernel(hub, name, token)
        await kernel.start()
        for code in (SETUP, ANSWER):
            _, status, text = await kernel.execute(code)
            if status != "ok":
                return time.monotonic() - start, False, f"FAIL {code[:30]!r}: {text}", 0
        seconds, status, text = await kernel.execute(CHECK)
        kernel.ws.close()
        return seconds, status == "ok" and PASSED in text, text, kernel.reconnects
    except Exception as err:  # noqa: BLE001 - reported with the figures, never hidden
        return time.monotonic() - start, False, f"FAIL {type(err).__name__}: {err}", 0


async def measure(hub, names):
    """Phase 1 with ``names[0]`` alone, phase 2 with all; the four lists of seconds."""
    # Every learner's requests wait in their own thread: asyncio's default pool (a handful
    # of threads) would queue the learners behind each other and time the client, not the room.
    asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor(4 * len(names)))
    for name in names:
        await asyncio.to_thread(hub.api, "POST", f"/users/{name}")
    ready_alone = [await spawn(hub, names[0])]
    check_alone = [await check_cell(hub, names[0])]
    await stop(hub, names[0])
    ready_all = await asyncio.gather(*(spawn(hub, n) for n in names))
    check_all = await asyncio.gather(*(check_cell(hub, n) for n in names))
    return ready_alone, check_alone, ready_all, check_all


def failures(checks):
    """One line per failed check: the lines of its output that say why."""
    lines = []
    for seconds, passed, text, _ in checks:
        if not passed:
            why = [t.strip() for t in text.splitlines() if "FAIL" in t or "within" in t]
            lines.append(f"  after {seconds:.1f} s: " + " / ".join(why[:3]))
    return lines


def row(label, alone, together):
    return (f"{label:<32} {alone[0]:>8.1f} {statistics.median(together):>10.1f} "
            f"{max(together):>10.1f} {statistics.median(together) / alone[0]:>9.1f}x")


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-n", "--learners", type=int, default=20, help="learners at once (20)")
    p.add_argument("-c", "--cpus", type=int, default=2, help="CPUs each server asks for (2)")
    args = p.parse_args(argv)
    reason = unavailable()
    if reason:
        raise SystemExit(f"bench/room.py: {reason}")
    site = build()
    group = f"dlb{os.getpid() % 100000}"
    print(f"room: {args.learners} learners, {args.cpus} CPUs each, on a Slurm node of "
          f"{args.learners * args.cpus} CPUs; this machine has {os.cpu_count()} cores",
          flush=True)
    with Slurm(nodes=1, cpus=args.learners * args.cpus) as cluster, \
            Learners(args.learners, prefix=f"rb{os.getpid() % 10000}", group=group) as learners, \
            Hub(site, cluster, group, cpus=args.cpus) as hub:
        results = asyncio.run(measure(hub, learners.names))
    ready_alone, check_alone, ready_all, check_all = results
    print(f"{'seconds':<32} {'alone':>8} {'median':>10} {'worst':>10} {'median/alone':>10}")
    print(row("spawn to a ready server", ready_alone, ready_all))
    print(row("check cell (3 tests, 1-4 ranks)", [c[0] for c in check_alone],
              [c[0] for c in check_all]))
    passed = sum(c[1] for c in check_all)
    print(f"servers ready: {len(ready_all)} of {args.learners}; checks passed (a right answer: "
          f"3 / 3): alone {sum(c[1] for c in check_alone)} of 1, together {passed} of "
          f"{args.learners} ({passed / args.learners:.0%}); websockets reopened after the server closed them: "
          f"{sum(c[3] for c in check_all)}; nothing left running (the teardown checked)")
    failed = failures(check_alone) + failures(check_all)
    if failed:
        print("failed checks, and why:", *failed, sep="\n")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
