"""The course's JupyterHub (deploy/jupyterhub_config.py) on a private Slurm, for tests and bench.

    with Hub(site, cluster, group="...", cpus=2) as hub:     # as root; ~5 s to answer
        hub.api("GET", "/users")                              # with the hub's service token
        ...                                                   # on exit: every server stopped

It starts ``SITE/venv/bin/jupyterhub -f SITE/course/deploy/jupyterhub_config.py``, exactly as the
admin README says, in a working folder of its own (database, cookie secret, log), on free
ports of 127.0.0.1, with the cluster's ``SLURM_CONF``. The only addition is a service,
``dlhack-tests``, whose token may manage users and servers (the load benchmark spawns through
it; the browser test only reads with it): it is added by a config file that loads the deploy
config first, so the deploy config itself is what runs.

:meth:`Hub.stop` stops the hub with SIGTERM: JupyterHub then stops every server (batchspawner
scancels its job) and the proxy. It asserts that no job, no hub or proxy process is left.
"""
import json
import os
import secrets
import signal
import subprocess
import tempfile
import time
import urllib.error
import urllib.request
from pathlib import Path

from slurm import Service, free_ports

SERVICE = "dlhack-tests"
EXTRA_CONFIG = """\
c = get_config()
load_subconfig({deploy!r})
c.JupyterHub.services = [{{"name": {service!r}, "api_token": {token!r}}}]
c.JupyterHub.load_roles = [{{"name": "dlhack-tests", "services": [{service!r}],
                             "scopes": ["admin:users", "admin:servers", "tokens",
                                        "access:servers", "read:users"]}}]
"""


class Hub(Service):
    """The course's hub on ``cluster``, serving ``site`` (a deploy/install.sh prefix)."""

    def __init__(self, site, cluster, group, cpus=2, settings=None):
        self.site, self.cluster = Path(site), cluster
        self.dir = Path(tempfile.mkdtemp(prefix="dlhack-hub-"))
        self.port, self.hub_port, self.proxy_port = free_ports(3)
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = secrets.token_hex(24)
        self.env = dict(cluster.env, DLHACK_PREFIX=str(self.site), DLHACK_GROUP=group,
                        DLHACK_CPUS=str(cpus), DLHACK_RUNTIME="01:00:00",
                        PATH=f"{self.site / 'venv' / 'bin'}:/usr/local/bin:/usr/bin:/bin",
                        **(settings or {}))
        self.process = None

    def start(self, timeout=90):
        config = self.dir / "jupyterhub_config.py"
        config.write_text(EXTRA_CONFIG.format(
            deploy=str(self.site / "course" / "deploy" / "jupyterhub_config.py"),
            service=SERVICE, token=self.token))
        cmd = [str(self.site / "venv" / "bin" / "jupyterhub"), "-f", str(config),
               f"--JupyterHub.bind_url={self.url}", f"--JupyterHub.hub_port={self.hub_port}",
               f"--ConfigurableHTTPProxy.api_url=http://127.0.0.1:{self.proxy_port}",
               f"--JupyterHub.db_url=sqlite:///{self.dir / 'jupyterhub.sqlite'}",
               f"--JupyterHub.cookie_secret_file={self.dir / 'cookie_secret'}"]
        with open(self.dir / "hub.log", "w") as log:
            self.process = subprocess.Popen(cmd, cwd=self.dir, env=self.env, stdout=log,
                                            stderr=subprocess.STDOUT, start_new_session=True)
        deadline = time.monotonic() + timeout
        while True:
            try:
                self.api("GET", "/")
                return
            except OSError:
                if self.process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"the hub did not start:\n{self.log()}")
                time.sleep(0.5)

    def log(self, lines=60):
        path = self.dir / "hub.log"
        return "\n".join(path.read_text().splitlines()[-lines:]) if path.exists() else ""

    def api(self, method, path, body=None, timeout=30):
        """A call to the hub's REST API (``/hub/api`` + path) with the service's token."""
        request = urllib.request.Request(
            f"{self.url}/hub/api{path}", method=method,
            data=None if body is None else json.dumps(body).encode(),
            headers={"Authorization": f"token {self.token}"})
        with urllib.request.urlopen(request, timeout=timeout) as response:
            text = response.read()
            return json.loads(text) if text else None

    def stop(self, check=True, timeout=120):
        """SIGTERM to the hub (it stops the servers and the proxy); asserts nothing is left."""
        if self.process and self.process.poll() is None:
            os.killpg(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout=timeout)
            except subprocess.TimeoutExpired:
                os.killpg(self.process.pid, signal.SIGKILL)
                self.process.wait()
        deadline = time.monotonic() + 60  # scancel'ed jobs take a moment to finish
        while True:
            left = [f"{j['id']} {j['name']} {j['user']} {j['state']}"
                    for j in self.cluster.squeue() if j["name"] == "spawner-jupyterhub"]
            if not left or time.monotonic() > deadline:
                break
            time.sleep(1)
        stragglers = []
        if self.process:
            try:
                os.killpg(self.process.pid, 0)
                stragglers.append(f"process group {self.process.pid}")
                os.killpg(self.process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        log = self.log()
        subprocess.run(["rm", "-rf", str(self.dir)], check=False)
        if check:
            assert not left, f"servers' jobs outlived the hub: {left}\n{log}"
            assert not stragglers, f"the hub's processes outlived it: {stragglers}\n{log}"
