"""Run a learner's training script and record, rank by rank, what the graded tests check.

    mpiexec -n 3 python observe.py OUT [options] -- train_mn.py --iterations 4 --out OUT/out{rank}

The script runs unchanged (``runpy``, as ``__main__``); only Chainer and ChainerMN are watched.
``{rank}`` in the script's arguments becomes the rank. Each rank writes ``OUT/rank.R.json``
(events, devices, training shard, batch sizes, extensions, validation results and the dev
sentences evaluated, how it ended) and ``OUT/rank.R.npz`` (parameters at the start, after the
first update and at the end; gradients of the last update). Options:

    --sim-gpu          pretend there are GPUs: a CuPy device or a GPU communicator is recorded,
                       then replaced by the CPU and ``naive`` (labelled "simulated on CPU")
    --eval-params F    before training, load F's parameters on every rank (each Evaluator is
                       run there, with or without this)
    --perturb          then give every rank different initial weights (as an unseeded run would)
    --init F           start training from F's parameters (the one-process reference)
    --replay F         feed the batches pickled in F instead of the iterator's own
    --no-train         stop where training would start
    --hosts LAYOUT     pretend to run on K nodes: ``block:K`` or ``cyclic:K`` (rank r on node
                       r % K), through MPI's processor name, whence ChainerMN's intra_rank

Float64 (``chainer.config.dtype``) and no dropout (``chainer.config.train = False``, which in
this model only turns dropout off): N ranks can be compared with one process exactly.
"""
import argparse
import json
import os
import pickle
import runpy
import sys
import traceback
from pathlib import Path

import numpy as np

GPU_COMMUNICATORS = ("pure_nccl", "non_cuda_aware", "flat", "hierarchical", "two_dimensional",
                     "single_node")


class Stop(Exception):
    """Raised at Trainer.run under --no-train: the script is left there."""


def params_of(model):
    return {name: np.array(p.array) for name, p in sorted(model.namedparams())
            if p.array is not None}


def grads_of(model):
    return {name: np.array(p.grad) for name, p in sorted(model.namedparams())
            if p.grad is not None}


def load_params(model, path):
    with np.load(path) as saved:
        for name, p in model.namedparams():
            p.array[...] = saved[name]


def describe(spec):
    """A device spec, as text: ``@numpy``, ``@cupy:1``."""
    import chainer

    if isinstance(spec, chainer.backend.Device):
        return getattr(spec, "spec", str(spec))
    if isinstance(spec, (int, np.integer)):
        return f"@cupy:{int(spec)}" if spec >= 0 else "@numpy"
    if isinstance(spec, tuple) and len(spec) == 2:
        return f"@{spec[0]}:{spec[1]}"
    return str(spec)


def host_of(layout, rank, size):
    """The simulated node of ``rank`` of ``size`` under ``layout`` (``block:K``, ``cyclic:K``)."""
    kind, nodes = layout.split(":")
    return f"node{rank % int(nodes) if kind == 'cyclic' else rank * int(nodes) // size}"


def pretend_hosts(layout, rank, size):
    """Make MPI's processor name this rank's simulated node, for ChainerMN and the course."""
    from mpi4py import MPI

    name = host_of(layout, rank, size)
    MPI.Get_processor_name = lambda: name
    os.environ["DLHACK_HOSTNAME"] = name
    return name


class Observer:
    def __init__(self, out, opts, rank):
        self.out, self.opts, self.rank = Path(out), opts, rank
        self.record = {"rank": rank, "events": [], "finished": False, "error": None}
        self.arrays = {}

    def event(self, *what):
        self.record["events"].append(list(what))

    def save(self):
        (self.out / f"rank.{self.rank}.json").write_text(json.dumps(self.record))
        np.savez(self.out / f"rank.{self.rank}.npz", **self.arrays)

    def patch(self):
        import chainer
        import chainermn
        from chainer import training

        obs, opts = self, self.opts
        real_create = chainermn.create_communicator

        def create_communicator(communicator_name="pure_nccl", *args, **kwargs):
            name = kwargs.pop("communicator_name", communicator_name)
            used = "naive" if opts.sim_gpu and name in GPU_COMMUNICATORS else name
            comm = real_create(used, *args, **kwargs)
            obs.event("communicator", name, comm.intra_rank)
            return comm

        chainermn.create_communicator = create_communicator

        class SimulatedGpu(chainer.backend.CpuDevice):
            """A CuPy device asked for under --sim-gpu: the CPU, remembering what was asked."""

            def __init__(self, spec):
                super().__init__()
                self.spec = spec

        real_get_device = chainer.get_device

        def get_device(spec, *args, **kwargs):
            if isinstance(spec, chainer.backend.Device):
                return spec
            text = describe(spec)
            obs.event("device", text)
            if opts.sim_gpu and text.startswith("@cupy"):
                return SimulatedGpu(text)
            return real_get_device(spec, *args, **kwargs)

        chainer.get_device = chainer.backend.get_device = get_device
        cuda = chainer.backends.cuda
        real_from_id = cuda.get_device_from_id

        def get_device_from_id(device_id):
            obs.event("device", describe(int(device_id)))
            return SimulatedGpu(describe(int(device_id))) if opts.sim_gpu else real_from_id(device_id)

        cuda.get_device_from_id = get_device_from_id
        real_to_device, real_to_gpu = chainer.Link.to_device, chainer.Link.to_gpu

        def to_device(link, device):
            obs.event("to_device", describe(device))
            return real_to_device(link, device)

        def to_gpu(link, device=None):
            obs.event("to_device", describe(0 if device is None else device))
            return link if opts.sim_gpu else real_to_gpu(link, device)

        chainer.Link.to_device, chainer.Link.to_gpu = to_device, to_gpu
        real_run = training.Trainer.run

        def run(trainer, *args, **kwargs):
            obs.event("trainer")
            obs.before(trainer)
            if opts.no_train:
                raise Stop
            result = real_run(trainer, *args, **kwargs)
            obs.after(trainer)
            return result

        training.Trainer.run = run

    def evaluators(self, trainer):
        from chainer.training import extensions

        return [(name, entry.extension) for name, entry in sorted(trainer._extensions.items())
                if isinstance(entry.extension, extensions.Evaluator)]

    def before(self, trainer):
        updater = trainer.updater
        model = updater.get_optimizer("main").target
        iterator = updater.get_iterator("main")
        rec = self.record
        rec["dataset"] = [[np.asarray(x).tolist(), np.asarray(y).tolist()]
                          for x, y in iterator.dataset]
        rec["extensions"] = {name: type(entry.extension).__name__
                             for name, entry in trainer._extensions.items()}
        rec["evaluators"] = [name for name, _ in self.evaluators(trainer)]
        rec["devices"] = {"model": describe(model.device),
                          "updater": describe(updater.device) if updater.device else None,
                          "updater input": (describe(updater.input_device)
                                            if updater.input_device else None)}
        for name, ext in self.evaluators(trainer):
            rec["devices"][f"evaluator {name}"] = describe(ext.device) if ext.device else None
        if self.opts.eval_params:
            load_params(model, self.opts.eval_params)
        rec["evaluated"] = {}  # sentences each evaluator of this rank went through
        rec["validation"] = {}
        for name, ext in self.evaluators(trainer):
            rec["evaluated"][name] = counted = []
            real_converter = ext.converter

            def converter(batch, *args, _real=real_converter, _counted=counted, **kwargs):
                _counted.extend([np.asarray(x).tolist(), np.asarray(y).tolist()]
                                for x, y in batch)
                return _real(batch, *args, **kwargs)

            ext.converter = converter
            try:
                rec["validation"][name] = {k: float(v) for k, v in ext(trainer).items()}
            finally:
                ext.converter = real_converter
        if self.opts.perturb:
            rng = np.random.RandomState(1000 + self.rank)
            for _, p in sorted(model.namedparams()):
                p.array[...] = rng.uniform(-0.1, 0.1, p.shape)
        if self.opts.init:
            load_params(model, self.opts.init)
        self.arrays.update({f"init/{k}": v for k, v in params_of(model).items()})
        batches, sizes = [], []
        rec["batch_sizes"] = sizes
        replay = None
        if self.opts.replay:
            replay = pickle.loads(Path(self.opts.replay).read_bytes())
        real_next = iterator.next

        def next_batch():
            batch = real_next()
            if replay is not None:
                batch = replay.pop(0)
            sizes.append(len(batch))
            batches.append([(np.asarray(x), np.asarray(y)) for x, y in batch])
            return batch

        iterator.next = iterator.__next__ = next_batch
        real_update = updater.update

        def update():
            real_update()
            if updater.iteration == 1:
                self.arrays.update({f"first/{k}": v for k, v in params_of(model).items()})

        updater.update = update
        self.batches, self.model = batches, model
        self.save()

    def after(self, trainer):
        self.arrays.update({f"final/{k}": v for k, v in params_of(self.model).items()})
        self.arrays.update({f"grad/{k}": v for k, v in grads_of(self.model).items()})
        (self.out / f"rank.{self.rank}.batches.pkl").write_bytes(pickle.dumps(self.batches))
        self.save()


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    split = argv.index("--")
    p = argparse.ArgumentParser(description=__doc__)
    p.add_argument("out")
    p.add_argument("--sim-gpu", action="store_true")
    p.add_argument("--eval-params")
    p.add_argument("--perturb", action="store_true")
    p.add_argument("--init")
    p.add_argument("--replay")
    p.add_argument("--no-train", action="store_true")
    p.add_argument("--hosts")
    opts = p.parse_args(argv[:split])
    script, *args = argv[split + 1:]
    rank = int(os.environ.get("PMI_RANK", "0"))
    host = None
    if opts.hosts:
        host = pretend_hosts(opts.hosts, rank, int(os.environ.get("PMI_SIZE", "1")))
    import dlhack  # noqa: F401, I001  (first: it imports Chainer quietly)
    import chainer

    chainer.global_config.dtype = np.dtype(np.float64)
    chainer.global_config.train = False  # no dropout: N ranks must match one process exactly
    obs = Observer(opts.out, opts, rank)
    obs.record["host"] = host
    obs.patch()
    sys.argv = [script] + [a.replace("{rank}", str(rank)) for a in args]
    sys.path.insert(0, str(Path(script).resolve().parent))
    try:
        runpy.run_path(script, run_name="__main__")
    except Stop:
        pass
    except SystemExit as err:
        if err.code not in (None, 0):
            obs.record["error"] = {"type": "SystemExit", "message": str(err.code), "line": None}
            obs.save()
            raise
    except BaseException as err:
        frames = [f for f in traceback.extract_tb(err.__traceback__)
                  if Path(f.filename).name == Path(script).name]
        obs.record["error"] = {"type": type(err).__name__, "message": str(err)[:500],
                               "line": frames[-1].lineno if frames else None}
        obs.save()
        raise
    obs.record["finished"] = True
    obs.save()


if __name__ == "__main__":
    main()
