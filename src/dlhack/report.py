"""What a training run reports: its summary, and rank 0's progress, log, plots, model, metrics.

``dlhack.train`` calls ``run_summary`` on every rank (it is the same on all) and the rest on
rank 0 only; nothing here talks to other ranks.
"""
import dataclasses
import importlib
import json
import time
from pathlib import Path

import chainer
from chainer.training import extensions

from dlhack.atomic import write_json

LOG_KEYS = ["epoch", "iteration", "main/loss", "validation/main/loss", "validation/bleu",
            "elapsed_time"]


def attach(trainer, config, progress=True):
    """Add the log, the printed table, the progress bar and the live plot (``LivePlot``).

    A run of a fixed number of iterations is a throughput probe: it logs once at the end and
    draws no plots, because the other ranks would wait for rank 0's plotting inside their
    timed steps and the probe would understate the speed-up.
    """
    if config.iterations:
        trigger = (config.iterations, "iteration")
        trainer.extend(extensions.LogReport(trigger=trigger))
        trainer.extend(extensions.PrintReport(LOG_KEYS), trigger=trigger)
    else:
        trainer.extend(extensions.LogReport(trigger=(1, "epoch")))
        trainer.extend(extensions.PrintReport(LOG_KEYS))
        trainer.extend(LivePlot())
    if progress:
        trainer.extend(ProgressLine())


class LivePlot(chainer.training.Extension):
    """``training.png`` in the trainer's folder, drawn again from ``LogReport``'s log at the end
    of an epoch: the loss and the dev BLEU so far.

    Rank 0 draws while the other ranks go on to the next step and wait for it there, so the
    drawing is kept to ``budget`` of the time: after an epoch, the plot is drawn only if the
    time since the last drawing is at least the last drawing's cost over ``budget`` (the first
    epoch always draws; ``report.finish`` draws the end). Chainer's ``PlotReport`` would add
    every step's observation to a summary of its own, and import pyplot inside the first step.
    ``dlhack train`` freezes what is alive when training starts and collects garbage in step
    (parallel/gcstep.py): what rank 0 imports later, every one of its collections scans, and
    the other ranks wait for that too. This extension does nothing between epochs, and imports
    what it draws with before training.

    Args:
        budget: the largest share of the time spent drawing.
    """

    trigger = 1, "epoch"
    priority = chainer.training.PRIORITY_READER  # after LogReport has logged the epoch

    def __init__(self, budget=0.01):
        for module in ("matplotlib.figure", "matplotlib.backends.backend_agg"):
            importlib.import_module(module)  # now, not inside a step (see the docstring)
        self.budget, self.drawn, self.cost = budget, None, 0.0  # the last drawing: end, seconds
        self.drawings = 0

    def __call__(self, trainer):
        now = time.perf_counter()
        if self.drawn is not None and now - self.drawn < self.cost / self.budget:
            return
        plot_log(trainer.get_extension("LogReport").log, Path(trainer.out) / "training.png")
        self.drawn = time.perf_counter()
        self.cost, self.drawings = self.drawn - now, self.drawings + 1


class ProgressLine(chainer.training.Extension):
    """A one-line progress bar redrawn with a carriage return.

    Chainer's ProgressBar moves the cursor with terminal escape codes, which a notebook does
    not interpret (the bars pile up); a plain ``\\r`` works in a terminal and in Jupyter.
    """

    trigger = 1, "iteration"
    priority = chainer.training.PRIORITY_WRITER + 1  # before PrintReport's row, not after

    def __init__(self, width=30, every_seconds=0.5):
        self.width, self.every_seconds = width, every_seconds
        self._last = 0.0

    def __call__(self, trainer):
        now = time.perf_counter()
        length, unit = trainer.stop_trigger.get_training_length()
        done = trainer.updater.iteration if unit == "iteration" else \
            trainer.updater.epoch_detail
        finished = done >= length or trainer.updater.is_new_epoch  # end the line: a row follows
        # PrintReport writes its header after the first iteration's extensions: a bar drawn
        # then would be left without its newline, and the header glued to it.
        first = trainer.updater.iteration <= 1
        if (now - self._last < self.every_seconds or first) and not finished:
            return
        self._last = now
        frac = min(done / length, 1.0)
        bar = "#" * round(frac * self.width)
        loss = trainer.observation.get("main/loss")
        loss = f"  loss {float(loss.array if hasattr(loss, 'array') else loss):8.3f}" \
            if loss is not None else ""
        print(f"\r[{bar:<{self.width}}] {frac:6.1%}  iteration {trainer.updater.iteration}  "
              f"epoch {trainer.updater.epoch_detail:.2f}{loss}", end="\n" if finished else "",
              flush=True)


def run_summary(config, comm, updater, per_epoch, seconds):
    """The run's throughput, length and shape (the same on every rank); ``per_epoch``: the
    sentences every rank together trains on in an epoch, ``seconds``: the trainer's whole run."""
    sentences = round(updater.epoch_detail * per_epoch)  # every rank's, every step
    return {
        "bleu_tokenization": "sacrebleu corpus BLEU, tokenize='none' on the corpus tokens",
        "sentences_per_sec": updater.throughput(sentences),
        "ranks": comm.size,
        "epochs": updater.epoch_detail,
        "iterations": updater.iteration,
        "seconds": seconds,
        "train_seconds": updater.elapsed,  # timed steps only: no warm-up, no evaluation
        "batchsize": config.batchsize,
        "global_batchsize": config.batchsize * comm.size,
        "communicator": getattr(comm, "name", config.communicator),  # ours have a name
        # each rank updated its chunk of the parameters (dlhack.parallel.sharded)?
        "sharded_update": getattr(updater.get_optimizer("main"), "update_chunk", None) is not None,
        "impl": config.impl,
        "units": config.units,
        "layers": config.layers,
    }


def save_model(out, model, config, src_vocab, tgt_vocab):
    """``model.npz`` (parameters) and ``model.json`` (settings and vocabularies)."""
    out = Path(out)
    chainer.serializers.save_npz(out / "model.npz", model)
    write_json(out / "model.json", {
        "units": config.units, "layers": config.layers, "attention": config.attention,
        "src_vocab": src_vocab.words, "tgt_vocab": tgt_vocab.words})


def load_model(path):
    """Load a model saved by ``save_model``: path is the directory or its model.npz.

    Returns:
        (model, src_vocab, tgt_vocab)
    """
    from dlhack.corpus import Vocabulary
    from dlhack.model.seq2seq import Seq2seq

    path = Path(path)
    directory = path if path.is_dir() else path.parent
    meta = json.loads((directory / "model.json").read_text(encoding="utf-8"))
    src_vocab, tgt_vocab = Vocabulary(meta["src_vocab"]), Vocabulary(meta["tgt_vocab"])
    model = Seq2seq(len(src_vocab), len(tgt_vocab), n_units=meta["units"],
                    n_layers=meta["layers"], dropout=0.0, attention=meta["attention"])
    chainer.serializers.load_npz(directory / "model.npz", model)
    return model, src_vocab, tgt_vocab


def plot_log(log, path):
    """One PNG with the training/validation loss and the dev BLEU against the epoch.

    Drawn on its own Figure and canvas, so a notebook's inline backend is left alone.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(10, 3.5))
    FigureCanvasAgg(fig)
    ax_loss, ax_bleu = fig.subplots(1, 2)
    for key, label in (("main/loss", "train"), ("validation/main/loss", "dev")):
        points = [(e["epoch"], e[key]) for e in log if key in e]
        if points:
            ax_loss.plot(*zip(*points), marker="o", label=label)
    ax_loss.set(xlabel="epoch", ylabel="loss per sentence", title="loss")
    if ax_loss.lines:  # a run too short to log has no line to name
        ax_loss.legend()
    points = [(e["epoch"], e["validation/bleu"]) for e in log if "validation/bleu" in e]
    if points:
        ax_bleu.plot(*zip(*points), marker="o", color="tab:green")
    ax_bleu.set(xlabel="epoch", ylabel="BLEU", title="dev BLEU", ylim=(0, 100))
    fig.subplots_adjust(left=0.07, right=0.98, bottom=0.15, top=0.9, wspace=0.2)  # fixed:
    # tight_layout would measure every label first, and cost 40% of the drawing
    fig.savefig(path, dpi=100)


def finish(trainer, model, config, metrics, src_vocab, tgt_vocab):
    """Print the results and write model, metrics and the loss/BLEU plot to ``config.out``."""
    out = Path(config.out)
    log = trainer.get_extension("LogReport").log if "LogReport" in trainer._extensions else []
    metrics["log"] = log
    save_model(out, model, config, src_vocab, tgt_vocab)
    plot_log(log, out / "training.png")
    write_json(config.json or out / "metrics.json", {**metrics,
                                                     "config": dataclasses.asdict(config)})
    print(f"\ntest BLEU {metrics['bleu']:.1f} ({metrics['bleu_tokenization']})")
    print(f"throughput {metrics['sentences_per_sec']:.0f} sentences/s on {metrics['ranks']} "
          f"rank(s), global batch {metrics['global_batchsize']}, "
          f"{metrics['train_seconds']:.1f} s of training steps ({metrics['seconds']:.1f} s total)")
    for s in metrics.get("samples", []):
        print(f"  en:  {s['source']}\n  ref: {s['reference']}\n  out: {s['translation']}")
    print(f"wrote {out / 'metrics.json'}, {out / 'training.png'}, {out / 'model.npz'}")
