"""Figures of lessons 7 and 9: splitting the model, pipelines, and hiding communication."""
import numpy as np

from dlhack.figures.fonts import pyplot


def _box(ax, x, y, w, h, text, color):
    plt = pyplot()
    ax.add_patch(plt.Rectangle((x, y), w, h, color=color, ec="black", lw=0.6))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=9)


def _arrow(ax, x0, y0, x1, y1, text, color):
    ax.annotate("", xy=(x1, y1), xytext=(x0, y0),
                arrowprops={"arrowstyle": "->", "color": color, "lw": 1.5})
    ax.text((x0 + x1) / 2, (y0 + y1) / 2 + 0.22, text, ha="center", fontsize=8.5, color=color)


def split_the_model():
    """Data parallelism (split the batch) beside model parallelism (split the model) (lesson 7)."""
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(12, 3.6))
    for r in (0, 1):
        x = 0.3 + 2.4 * r
        left.text(x + 0.9, 3.05, f"rank {r}", ha="center", weight="bold")
        _box(left, x, 2.2, 1.8, 0.6, f"batch, half {r + 1}", "#fbe3c8")
        _box(left, x, 1.0, 1.8, 0.9, "encoder + decoder\n(the whole model)", "#cfe3cf")
        left.annotate("", xy=(x + 0.9, 1.9), xytext=(x + 0.9, 2.2),
                      arrowprops={"arrowstyle": "->"})
    _arrow(left, 2.1, 1.45, 2.7, 1.45, "", "tab:red")
    _arrow(left, 2.7, 1.25, 2.1, 1.25, "", "tab:red")
    left.text(2.4, 0.55, "allreduce of the gradients\n(once per step, size of the model)",
              ha="center", fontsize=8.5, color="tab:red")
    left.set(xlim=(0, 4.8), ylim=(0.3, 3.3), title="data parallelism: split the batch")
    left.axis("off")

    right.text(1.2, 3.05, "rank 0", ha="center", weight="bold")
    right.text(3.6, 3.05, "rank 1", ha="center", weight="bold")
    _box(right, 0.3, 2.2, 4.2, 0.6, "the whole batch (both ranks read it)", "#fbe3c8")
    _box(right, 0.3, 1.0, 1.8, 0.9, "embed_x\nencoder", "#cfe3cf")
    _box(right, 2.7, 1.0, 1.8, 0.9, "embed_y, decoder,\nattention, W_o, loss", "#cfe3cf")
    _arrow(right, 2.1, 1.6, 2.7, 1.6, "hy, cy, enc", "tab:blue")
    _arrow(right, 2.7, 1.25, 2.1, 1.25, "", "tab:red")
    right.text(2.4, 0.55, "activations forward, their gradients back\n"
               "(every step, grow with batch x length)", ha="center", fontsize=8.5,
               color="tab:blue")
    right.set(xlim=(0, 4.8), ylim=(0.3, 3.3), title="model parallelism: split the model")
    right.axis("off")
    plt.show()


def wire_bytes(per_sentence, mean_length, gradient_bytes, measured):
    """Bytes on the wire per step: model parallel by batch size against data parallel (lesson 7).

    Args:
        per_sentence: bytes one sentence's activations take one way.
        mean_length: the mean source length behind ``per_sentence`` (for the legend).
        gradient_bytes: one rank's gradients (data parallel sends these once a step).
        measured: (batch size, bytes both ways) of the steps measured on 2 ranks.
    """
    plt = pyplot()

    batch = np.arange(1, 1025)
    _fig, ax = plt.subplots(figsize=(8, 3.6))
    ax.plot(batch, 2 * per_sentence * batch / 1e6,
            label=f"model parallel: forward + backward (S = {mean_length:.1f})")
    ax.axhline(gradient_bytes / 1e6, color="tab:red",
               label="data parallel (2 ranks): one gradient per rank")
    ax.scatter([b for b, _ in measured], [n / 1e6 for _, n in measured], color="black", zorder=3,
               label="measured (S: longest in the batch)")
    crossover = gradient_bytes / (2 * per_sentence)
    ax.axvline(crossover, color="gray", ls=":")
    ax.text(crossover * 1.05, gradient_bytes / 1e6 * 0.4,
            f"equal at about\n{crossover:.0f} sentences", fontsize=8)
    ax.set(xscale="log", yscale="log", xlabel="sentences per step", ylabel="MB on the wire per step",
           title="what crosses the wire: activations grow with the batch, gradients do not")
    ax.legend(fontsize=8)
    plt.show()


def step_timeline(records, title):
    """One model-parallel step on each rank: computing, sending, waiting (lesson 7).

    Args:
        records: one record per rank (``start``, ``end`` and ``events``: (what, start, end,
            bytes)), rank 0 (the encoder) first.
        title: the figure's title.
    """
    plt = pyplot()

    t0 = min(rec["start"] for rec in records)
    _fig, ax = plt.subplots(figsize=(10, 2.4))
    for rank, rec in enumerate(records):
        y = 1 - rank
        ax.broken_barh([(1000 * (rec["start"] - t0), 1000 * (rec["end"] - rec["start"]))],
                       (y - 0.3, 0.6), color="tab:blue", label="computing" if rank == 0 else None)
        for what, start, end, _ in rec["events"]:
            ax.broken_barh([(1000 * (start - t0), 1000 * (end - start))], (y - 0.3, 0.6),
                           color="lightgray" if what.startswith("recv") else "tab:orange",
                           label=None)
            ax.text(1000 * ((start + end) / 2 - t0), y + 0.38, what, ha="center", fontsize=7.5)
    ax.broken_barh([(0, 0)], (0, 0), color="lightgray", label="waiting / receiving")
    ax.set(yticks=[1, 0], yticklabels=["rank 0\n(encoder)", "rank 1\n(decoder)"], xlabel="ms",
           ylim=(-0.5, 1.7), title=title)
    ax.legend(fontsize=8, loc="lower right")
    plt.show()


def _schedule(ax, n_micro, title):
    stage_time = 1.0 / n_micro  # the same work, in n_micro pieces
    for m in range(n_micro):
        for stage in (0, 1):  # forward: stage 0 then 1; backward: stage 1 then 0
            fwd = (m + stage) * stage_time
            bwd = (n_micro + 1 + m + (1 - stage)) * stage_time
            for start, color, name in ((fwd, "tab:blue", "F"), (bwd, "tab:green", "B")):
                ax.broken_barh([(start, stage_time)], (1 - stage - 0.3, 0.6), color=color,
                               ec="white")
                ax.text(start + stage_time / 2, 1 - stage, f"{name}{m + 1}", ha="center",
                        va="center", fontsize=8, color="white")
    total = 2 * (n_micro + 1) * stage_time
    idle = 1 / (n_micro + 1)
    ax.set(xlim=(0, 4), yticks=[1, 0], yticklabels=["rank 0", "rank 1"],
           title=f"{title}: {total:.2f} time units, each rank idle {idle:.0%}")


def pipeline_schedules(micro_batches=(1, 4)):
    """Two-stage pipeline schedules: one batch, then the batch in micro-batches (lesson 7)."""
    plt = pyplot()

    fig, axes = plt.subplots(len(micro_batches), 1, figsize=(9, 3.6), sharex=True)
    for ax, n_micro in zip(axes, micro_batches):
        _schedule(ax, n_micro, "one batch" if n_micro == 1 else f"{n_micro} micro-batches")
    axes[-1].set_xlabel("time, in units of one stage's forward (or backward) over the whole batch")
    fig.tight_layout()
    plt.show()


def bucket_starts(n_nodes, starts):
    """When each gradient bucket's allreduce starts, among backward's function nodes (lesson 9).

    Args:
        n_nodes: how many function nodes ran backward.
        starts: for each bucket, how many nodes had run backward when its allreduce started.
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(10, 2.2))
    ax.plot(range(n_nodes), np.zeros(n_nodes), "|", color="gray", markersize=12,
            label="a node's backward")
    ax.plot(starts, np.full(len(starts), 0.5), "v", color="tab:red", markersize=10,
            label="a bucket starts")
    ax.set(xlabel="function nodes of backward, in the order they ran", yticks=[], ylim=(-0.5, 1),
           title="when each bucket's allreduce starts during backward")
    ax.legend(loc="upper left", fontsize=8, ncol=2)
    plt.show()


def overlap_steps(median, exposed):
    """Median step time of each run, and the exposed wait of the overlapped ones (lesson 9).

    Args:
        median: run name -> median seconds per step.
        exposed: run name -> median seconds waited after backward.
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(8, 3.8))
    names = list(median)
    ax.bar(names, [1e3 * median[n] for n in names], color=["tab:blue", "tab:orange"] * 2)
    ax.bar(names, [1e3 * exposed[n] for n in names], color="black", alpha=0.3,
           label="overlap: the wait after backward (communication not hidden)")
    ax.set(ylabel="ms per step (median)", title="one training step at 2 ranks")
    ax.legend(fontsize=8)
    plt.xticks(rotation=15)
    plt.show()


def staleness_cost(rates, fresh, stale):
    """Loss after 100 steps by learning rate, fresh against one-step-stale gradients (lesson 9).

    Args:
        rates: learning rates times the largest curvature.
        fresh, stale: the loss at each rate with fresh and with one-step-stale gradients.
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 3.5))
    ax.semilogy(rates, fresh, "o-", label="fresh gradients (synchronous)")
    ax.semilogy(rates, stale, "s-", label="one step stale (double buffering)")
    ax.axvline(1, color="gray", lw=0.5)
    ax.axvline(2, color="gray", lw=0.5)
    ax.set(xlabel="learning rate x largest curvature", ylabel="loss after 100 steps",
           ylim=(None, 1e3), title="what one step of staleness costs")
    ax.legend(fontsize=8)
    plt.show()
