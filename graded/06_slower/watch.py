"""Run a learner's training script and count, rank by rank, the work that makes it slow.

    mpiexec -n 2 python watch.py OUT [--sim-gpu] -- train_fast.py --iterations 3 --out OUT/out{rank}

Only quantities that do not depend on how busy the machine is: the BLAS threads the rank runs
(threadpoolctl), the sentences in its training shard (one epoch's worth of work), the size of its
batches, the dev sentences its Evaluator scores and whether the Evaluator is the multi-node one,
the sentences it translates (BLEU), and every device it chooses. Wall-clock time is never read.

This file imports nothing but the standard library before the script runs: the script must be
able to set ``OMP_NUM_THREADS`` before numpy starts OpenBLAS. Chainer, ChainerMN and the model
are patched from an import hook, right after each is first imported. Each rank writes
``OUT/rank.R.json``. With ``--sim-gpu`` a CuPy device or a GPU communicator is recorded, then
replaced by the CPU and ``naive`` (GPUs simulated on CPU).
"""
import importlib.abc
import importlib.util
import json
import os
import runpy
import sys
import traceback
from pathlib import Path

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
    def __init__(self, out, sim_gpu, rank):
        self.out, self.sim_gpu, self.rank = Path(out), sim_gpu, rank
        self.record = {"rank": rank, "events": [], "translated": 0, "finished": False,
                       "error": None}

    def save(self):
        (self.out / f"rank.{self.rank}.json").write_text(json.dumps(self.record))

    def hooks(self):
        return {"chainer": self.on_chainer, "chainermn": self.on_chainermn,
                "chainer.training.trainer": self.on_trainer,
                "dlhack.model.seq2seq": self.on_seq2seq}

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

        def create_communicator(communicator_name="pure_nccl", *args, **kwargs):
            name = kwargs.pop("communicator_name", communicator_name)
            used = "naive" if watcher.sim_gpu and name in GPU_COMMUNICATORS else name
            comm = real(used, *args, **kwargs)
            watcher.record["events"].append(["communicator", name, comm.intra_rank])
            return comm

        chainermn.create_communicator = create_communicator

    def on_seq2seq(self, module):
        watcher, real = self, module.Seq2seq.translate

        def translate(model, xs, *args, **kwargs):
            watcher.record["translated"] += len(xs)
            return real(model, xs, *args, **kwargs)

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

        rec = self.record
        rec["blas_threads"] = max([lib["num_threads"] for lib in threadpool_info()
                                   if lib.get("user_api") == "blas"] or [0])
        iterator = trainer.updater.get_iterator("main")
        rec["shard"] = len(iterator.dataset)
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
    rank = int(os.environ.get("PMI_RANK", "0"))
    watcher = Watcher(out, "--sim-gpu" in flags, rank)
    sys.meta_path.insert(0, AfterImport(watcher.hooks()))
    sys.argv = [script] + [a.replace("{rank}", str(rank)) for a in args]
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
