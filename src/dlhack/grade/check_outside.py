"""The grader's checking process: each graded test's check half, where no learner code ever ran.

    python check_outside.py LAB_COPY     # started by checker.py; one JSON request per line

``LAB_COPY`` is the grader's private copy of ``graded/*.py`` and one lab's folder (never a run's
copy, which learner code could see). For each request this process imports the test's module
from there (learner code is never imported: the answers reach only the ranks), reads what every
rank observed (``obs.RANK.I``, obsformat.py: no pickle) and, when a check asks, what the MPI
shim saw it send (``traffic.RANK``, traffic.py), draws the test's inputs from the grader's seed,
and calls ``check_NAME(obs, run)`` once per rank. Each answer: passed, failed (the check's
sentence), tampered (an observation or traffic file that the grader never wrote), or error (the
check itself broke, or the shim was missing: never the learner's doing). Run by its path with
the standard library and numpy: it imports no dlhack module (the lab's tests may, as lab 01's do).
"""
import importlib.util
import json
import os
import sys
import traceback
from pathlib import Path


def _load(name):
    path = Path(__file__).resolve().with_name(f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"_dlhack_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


obsformat = _load("obsformat")
traffic_log = _load("traffic")


class Missing(Exception):
    """A check read a value that the rank did not observe."""


class Unavailable(Exception):
    """What the check needs was never recorded, through no doing of the learner's."""


class Tampered(Exception):
    """What the check needs is there, but not as the grader wrote it."""


class Observed(dict):
    """One rank's observation: ``obs["got"]``; a value it lacks fails the test, by its name."""

    def __missing__(self, key):
        raise Missing(key)


class Run:
    """What a check knows besides the observation: the inputs' seed, the rank, the traffic."""

    def __init__(self, request, rank, observations):
        self.seed, self.size, self.rank = request["seed"], request["size"], rank
        self.params = request.get("params") or {}
        self.test = request["name"]
        self._request, self._observations = request, observations

    @property
    def traffic(self):
        """This rank's MPI calls in the test (traffic.Traffic)."""
        return self.traffic_of(self.rank)

    def traffic_of(self, rank):
        request = self._request
        marker = Path(request["run_dir"], f"pmpi.{rank}.error")
        if request["shim"] or marker.exists():  # then a traffic file is no shim's: never read
            raise Unavailable(f"the grader could not follow the messages: "
                              f"{request['shim'] or _head(marker)}")
        try:
            return traffic_log.read(request["run_dir"], rank, request["index"])
        except traffic_log.TrafficError as err:
            raise Tampered(f"your code changed the grader's record of rank {rank}'s messages "
                           f"({err})") from None

    def observed(self, rank):
        """Another rank's observation (``Missing`` when that rank reported none)."""
        if rank not in self._observations:
            raise Missing(f"rank {rank}")
        return self._observations[rank]


def _head(path):
    with open(path, errors="replace") as f:
        return f.read(500).strip()


def _module(root, rel, cache):
    if rel not in cache:
        path = Path(root, rel)
        sys.path[:0] = [str(path.parent)] if str(path.parent) not in sys.path else []
        spec = importlib.util.spec_from_file_location(path.stem, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[path.stem] = module
        spec.loader.exec_module(module)
        cache[rel] = module
    return cache[rel]


def _where(exc):
    frames = traceback.extract_tb(exc.__traceback__)
    return f" ({Path(frames[-1].filename).name}, line {frames[-1].lineno})" if frames else ""


def verdict(check, obs, run):
    """One rank's verdict from ``check(obs, run)``: a dict with outcome and message."""
    try:
        problem = check(obs, run)
    except Missing as err:
        return {"outcome": "failed", "message": f"rank {run.rank} reported no {err.args[0]}"}
    except Unavailable as err:
        return {"outcome": "error", "message": str(err)}
    except Tampered as err:
        return {"outcome": "tampered", "message": str(err)}
    except Exception as err:  # noqa: BLE001 - a broken check is the grader's fault, said so
        return {"outcome": "error", "message": f"the grader's check of this test broke "
                f"({type(err).__name__}: {str(err)[:300]}{_where(err)}); not your doing"}
    if problem is None:
        return {"outcome": "passed", "message": ""}
    return {"outcome": "failed", "message": str(problem)[:4000]}


def answer(request, root, cache):
    """``{rank: verdict}`` for the ranks in the request."""
    module = _module(root, request["file"], cache)
    check = getattr(module, "check_" + request["name"].removeprefix("test_"), None)
    if check is None:
        raise LookupError(f"{request['file']} has no check_{request['name'][5:]}")
    observations, verdicts = {}, {}
    for rank in request["ranks"]:
        path = Path(request["run_dir"], f"obs.{rank}.{request['index']}")
        try:
            observations[rank] = Observed(obsformat.read(path))
        except obsformat.ObservationError as err:
            verdicts[rank] = {"outcome": "tampered", "message": f"your code changed the "
                              f"grader's record of what rank {rank} observed ({err})"}
    for rank, obs in observations.items():
        verdicts[rank] = verdict(check, obs, Run(request, rank, observations))
    return verdicts


def serve(root, requests, replies):
    """Answer one JSON request per line until the input ends."""
    cache = {}
    for line in requests:
        request = json.loads(line)
        try:
            reply = {"id": request["id"], "verdicts": answer(request, root, cache)}
        except Exception as err:  # noqa: BLE001 - the grader words it as an error of its own
            reply = {"id": request["id"], "error": f"{type(err).__name__}: {err}{_where(err)}"}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


def main(argv):
    root = Path(argv[0]).resolve()
    sys.path[:0] = [str(root)]
    replies = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what a check prints must not mix with the replies
    sys.stdout = sys.stderr
    serve(root, sys.stdin, replies)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
