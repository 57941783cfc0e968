"""Local Unix users for the cluster tests: learners who log in to the hub and own Slurm jobs.

    with Learners(2) as learners:             # as root: useradd, a password each, a home each
        name, password = learners.accounts[0]
        ...                                   # on exit: their processes ended, userdel -r

Names are ``dl`` + this process's id + a letter, so that two test sessions never share one. A
home is readable by its owner only (mode 0700), as on a cluster. Removing a user first ends
every process that runs as that user (found by uid, so nobody else's), then removes the user
and the home; :meth:`Learners.remove` asserts that none of their processes survived.
"""
import os
import pwd
import secrets
import shutil
import signal
import subprocess
from pathlib import Path

import psutil


class Learners:
    """``n`` local users with random passwords; removed with everything they left running."""

    def __init__(self, n, prefix=None, group=None):
        prefix = prefix or f"dl{os.getpid() % 100000}"
        self.accounts = [(f"{prefix}{chr(ord('a') + i)}", secrets.token_urlsafe(12))
                         for i in range(n)]
        self.group = group  # a group of their own, made and removed with them (the hub's)

    @property
    def names(self):
        return [name for name, _ in self.accounts]

    def home(self, name):
        return pwd.getpwnam(name).pw_dir

    def __enter__(self):
        try:
            if self.group:
                subprocess.run(["groupadd", self.group], check=True)
            for name, password in self.accounts:
                subprocess.run(["useradd", "--create-home", "--shell", "/bin/bash", name],
                               check=True)
                if self.group:  # as deploy/README.md tells the admin
                    subprocess.run(["usermod", "-aG", self.group, name], check=True)
                os.chmod(self.home(name), 0o700)
                subprocess.run(["chpasswd"], input=f"{name}:{password}\n", text=True,
                               check=True)
        except BaseException:
            self.remove(check=False)
            raise
        return self

    def __exit__(self, *exc):
        self.remove(check=exc[0] is None)

    def folder(self, name, folder):
        """A new folder ``folder`` in ``name``'s home, owned by them; its path."""
        path = Path(self.home(name)) / folder
        path.mkdir()
        shutil.chown(path, name, name)
        return path

    def processes(self, name):
        try:
            uid = pwd.getpwnam(name).pw_uid
        except KeyError:
            return []
        found = []
        for proc in psutil.process_iter(["uids", "status"]):
            try:
                if proc.info["uids"].real == uid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                    found.append(proc)
            except (psutil.Error, TypeError):
                continue
        return found

    def remove(self, check=True):
        """End the users' processes (SIGTERM, then SIGKILL), remove users and homes."""
        left = {name: [p.pid for p in self.processes(name)] for name in self.names}
        for name in self.names:
            for sig, wait in ((signal.SIGTERM, 5), (signal.SIGKILL, 5)):
                procs = self.processes(name)
                for proc in procs:
                    try:
                        proc.send_signal(sig)
                    except psutil.Error:
                        pass
                psutil.wait_procs(procs, timeout=wait)
            subprocess.run(["userdel", "--remove", name], capture_output=True, check=False)
        if self.group:
            subprocess.run(["groupdel", self.group], capture_output=True, check=False)
        if check:
            left = {name: pids for name, pids in left.items() if pids}
            assert not left, f"processes of the test's learners were still running: {left}"
