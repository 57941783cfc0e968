"""Run a learner's training script and count, rank by rank, the work that makes it slow.

    mpiexec -n 2 python watch.py OUT [--sim-gpu] [--cores 16] [--hosts round-robin:2] -- \
        train_fast.py --iterations 3 --out OUT/out{rank}

Only quantities that do not depend on how busy the machine is: the BLAS threads the rank runs
(threadpoolctl), the sentences in its training shard (one epoch's worth of work), the size of its
batches, the dev sentences its Evaluator scores and whether the Evaluator is the multi-node one,
the sentences it translates (BLEU), and every device it chooses. Wall-clock time is never read.

This file imports nothing but the standard library before the script runs: the script must be
able to set ``OMP_NUM_THREADS`` before numpy starts OpenBLAS. Chainer, ChainerMN and the model
are patched from an import hook, right after each is first imported. Each rank writes
``OUT/rank.R.json``. With ``--sim-gpu`` a CuPy device or a GPU communicator is recorded, then
replaced by the CPU and ``naive`` (GPUs simulated on CPU).

The machine is simulated too, so that a bug that hides on the grading machine shows:
``--cores N`` makes ``os.cpu_count()`` say N, and the BLAS threads a rank asks for are read from
the environment when numpy is imported (OpenBLAS itself never starts more threads than the real
cores); ``--hosts LAYOUT:K`` names each rank's host as if the ranks ran K to a node, in blocks
or round-robin, so that ChainerMN's ``intra_rank`` differs from ``rank``. Test sentences are
"translated" by a fixed rule from their references (:func:`pseudo_translation`), so that the BLEU
the script prints can be checked against the one the grader computes from every sentence once.
Each rank records the ids (hashes) of the training sentences in its shard, the extensions it
runs, and the sentences it translated.
"""
import hashlib
import importlib.abc
import importlib.util
import json
import os
import runpy
import sys
import traceback
from pathlib import Path

THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "GOTO_NUM_THREADS", "OMP_NUM_THREADS")  # OpenBLAS's order
WRITERS = ("LogReport", "PrintReport", "PlotReport", "ProgressBar", "snapshot")


def sentence_id(src, tgt=()):
    """A short hash of a sentence pair's ids: the same sentence, the same id, in any process."""
    text = ",".join(map(str, list(src))) + "|" + ",".join(map(str, list(tgt)))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def pseudo_translation(tgt_ids):
    """The "translation" of a test sentence whose reference ids are ``tgt_ids``: the reference
    with some words left out and some endings cut, so that each sentence scores differently."""
    ids = [int(i) for i in tgt_ids]
    k = sum(ids) + len(ids)
    out = [i for j, i in enumerate(ids) if (j + k) % 4 != 1]
    return out[:max(1, len(out) - 1)] if k % 3 == 0 else out


def host_of(rank, size, hosts):
    """The simulated host of ``rank`` for ``hosts`` = "block:K" or "round-robin:K"."""
    layout, per_node = hosts.split(":")
    nodes = -(-size // int(per_node))
    node = rank // int(per_node) if layout == "block" else rank % nodes
    return f"node{node}"


def script_option(name, default):
    argv = sys.argv
    return int(argv[argv.index(name) + 1]) if name in argv else default


GPU_COMMUNICATORS = ("pure_nccl", "non_cuda_aware", "flat", "hierarchical", "two_dimensional",
                     "single_node")


class AfterImport(importlib.abc.MetaPathFinder):
    """Call ``callbacks[name](module)`` right after module ``name`` is first executed."""

    def __init__(self, callbacks):
        self.callbacks = callbacks

    def find_spec(self, name, path, target=None):
        if name not in self.callbacks:
            return None
        sys.meta_path.remove(self)
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        if spec is None or spec.loader is None:
            return None
        real, then = spec.loader.exec_module, self.callbacks.pop(name)

        def exec_module(module):
            real(module)
            then(module)

        spec.loader.exec_module = exec_module
        return spec


def describe(spec, chainer):
    if isinstance(spec, chainer.backend.Device):
        return getattr(spec, "spec", str(spec))
    if isinstance(spec, int):
        return f"@cupy:{spec}" if spec >= 0 else "@numpy"
    return str(spec)


class Watcher:
    def __init__(self, out, sim_gpu, rank, host=None):
        self.out, self.sim_gpu, self.rank, self.host = Path(out), sim_gpu, rank, host
        self.record = {"rank": rank, "events": [], "translated": 0, "translated_ids": [],
                       "finished": False, "error": None, "host": host}

    def save(self):
        (self.out / f"rank.{self.rank}.json").write_text(json.dumps(self.record))

    def hooks(self):
        return {"numpy": self.on_numpy, "chainer": self.on_chainer, "chainermn": self.on_chainermn,
                "chainer.training.trainer": self.on_trainer,
                "dlhack.model.seq2seq": self.on_seq2seq}

    def on_numpy(self, numpy):
        # What OpenBLAS was asked for as numpy loaded it (the first variable set wins).
        self.record["blas_env"] = {name: os.environ.get(name) for name in THREAD_VARIABLES}

    def on_chainer(self, chainer):
        watcher = self

        class SimulatedGpu(chainer.backend.CpuDevice):
            def __init__(self, spec):
                super().__init__()
                self.spec = spec

        real_get_device = chainer.backend.get_device

        def get_device(spec, *args, **kwargs):
            if isinstance(spec, chainer.backend.Device):
                return spec
            text = describe(spec, chainer)
            watcher.record["events"].append(["device", text])
            if watcher.sim_gpu and text.startswith("@cupy"):
                return SimulatedGpu(text)
            return real_get_device(spec, *args, **kwargs)

        chainer.get_device = chainer.backend.get_device = get_device
        real_to_device = chainer.Link.to_device

        def to_device(link, device):
            watcher.record["events"].append(["to_device", describe(device, chainer)])
            return real_to_device(link, device)

        chainer.Link.to_device = to_device

    def on_chainermn(self, chainermn):
        watcher, real = self, chainermn.create_communicator

        if self.host:  # ChainerMN groups ranks into nodes by MPI's processor name
            import mpi4py.MPI

            mpi4py.MPI.Get_processor_name = lambda: self.host

        def create_communicator(communicator_name="pure_nccl", *args, **kwargs):
            name = kwargs.pop("communicator_name", communicator_name)
            used = "naive" if watcher.sim_gpu and name in GPU_COMMUNICATORS else name
            comm = real(used, *args, **kwargs)
            watcher.record["events"].append(["communicator", name, comm.intra_rank])
            return comm

        chainermn.create_communicator = create_communicator

    def references(self):
        """{source sentence id: reference ids} of the test set the script's options make."""
        if not hasattr(self, "_references"):
            from dlhack.corpus import default_corpus

            corpus = default_corpus(seed=0, n_train=script_option("--n-train", 4000),
                                    n_dev=script_option("--n-dev", 240),
                                    n_test=script_option("--n-test", 240))
            self._references = {sentence_id(src): tgt for src, tgt in corpus.test}
        return self._references

    def on_seq2seq(self, module):
        watcher, real = self, module.Seq2seq.translate

        def translate(model, xs, *args, **kwargs):
            watcher.record["translated"] += len(xs)
            ids = [sentence_id(x.tolist()) for x in xs]
            watcher.record["translated_ids"] += ids
            refs = watcher.references()
            if not all(i in refs for i in ids):  # not the test set: translate for real
                return real(model, xs, *args, **kwargs)
            import numpy as np

            return [np.asarray(pseudo_translation(refs[i]), dtype=np.int32) for i in ids]

        module.Seq2seq.translate = translate

    def on_trainer(self, module):
        watcher, real = self, module.Trainer.run

        def run(trainer, *args, **kwargs):
            watcher.before(trainer)
            return real(trainer, *args, **kwargs)

        module.Trainer.run = run

    def before(self, trainer):
        from chainer.training import extensions
        from threadpoolctl import threadpool_info

        self.record["writers"] = sorted(name for name in trainer._extensions
                                        if name.split("_")[0] in WRITERS)
        rec = self.record
        rec["blas_threads"] = max([lib["num_threads"] for lib in threadpool_info()
                                   if lib.get("user_api") == "blas"] or [0])
        iterator = trainer.updater.get_iterator("main")
        rec["shard"] = len(iterator.dataset)
        rec["shard_ids"] = [sentence_id(*example) for example in iterator.dataset]
        rec["batch_sizes"] = sizes = []
        real_next = iterator.next

        def next_batch():
            batch = real_next()
            sizes.append(len(batch))
            return batch

        iterator.next = iterator.__next__ = next_batch
        rec["evaluators"] = [
            {"name": name, "multi_node": hasattr(entry.extension, "_mn_communicator"),
             "sentences": len(entry.extension.get_iterator("main").dataset)}
            for name, entry in sorted(trainer._extensions.items())
            if isinstance(entry.extension, extensions.Evaluator)]
        self.save()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--")
    out, flags = argv[0], argv[1:split]
    script, *args = argv[split + 1:]
    rank, size = int(os.environ.get("PMI_RANK", "0")), int(os.environ.get("PMI_SIZE", "1"))
    host = host_of(rank, size, flags[flags.index("--hosts") + 1]) if "--hosts" in flags else None
    if host:
        os.environ["DLHACK_HOSTNAME"] = host  # dlhack.parallel.hosts reads it
    if "--cores" in flags:
        cores = int(flags[flags.index("--cores") + 1])
        os.cpu_count = lambda: cores
    watcher = Watcher(out, "--sim-gpu" in flags, rank, host)
    sys.meta_path.insert(0, AfterImport(watcher.hooks()))
    sys.argv = [script] + [a.replace("{rank}", str(rank)) for a in args]
    watcher.record["cores"] = os.cpu_count()
    sys.path.insert(0, str(Path(script).resolve().parent))
    try:
        runpy.run_path(script, run_name="__main__")
    except SystemExit as err:
        if err.code not in (None, 0):
            watcher.record["error"] = {"type": "SystemExit", "message": str(err.code),
                                       "line": None}
            watcher.save()
            raise
    except BaseException as err:
        frames = [f for f in traceback.extract_tb(err.__traceback__)
                  if Path(f.filename).name == Path(script).name]
        watcher.record["error"] = {"type": type(err).__name__, "message": str(err)[:500],
                                   "line": frames[-1].lineno if frames else None}
        watcher.save()
        raise
    watcher.record["finished"] = True
    watcher.save()


if __name__ == "__main__":
    main()
