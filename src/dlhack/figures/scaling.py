"""Figures of lessons 3, 5 and 8: speed-up and step breakdowns, large batches, network models."""
import numpy as np

from dlhack.figures.fonts import pyplot


def speedup(one, two, phases):
    """Throughput at 1 and 2 ranks, and where each rank's step goes (lesson 3).

    Args:
        one, two: the 1- and 2-rank results of ``scaling.json`` (``median``,
            ``sentences_per_sec``, ``profile``).
        phases: the profiler's phases, in order (``dlhack.step_profile.PHASES``).
    """
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4.2))
    for k, r in ((1, one), (2, two)):
        left.bar(k, r["median"], width=0.5, color="tab:blue", alpha=0.7)
        left.plot([k] * len(r["sentences_per_sec"]), r["sentences_per_sec"], "k.")  # each repeat
        left.text(k, r["median"] / 2, f"{r['median']:.0f}/s", ha="center", color="white")
    left.hlines(2 * one["median"], 1.7, 2.3, colors="gray", linestyles="--",
                label="ideal: 2x one rank")
    top = max(2 * one["median"], *one["sentences_per_sec"], *two["sentences_per_sec"])
    left.set(xticks=[1, 2], xlabel="ranks", ylabel="sentences per second (all ranks)",
             ylim=(0, 1.1 * top), title=f"throughput: {two['median'] / one['median']:.2f}x at 2 ranks")
    left.legend(loc="upper left", fontsize=8)

    columns = [("1 rank", one["profile"]["ranks"][0]["ms"])]
    columns += [(f"2 ranks\nrank {r['rank']}", r["ms"]) for r in two["profile"]["ranks"]]
    bottom = np.zeros(len(columns))
    for phase in phases:
        heights = np.array([ms[phase] for _, ms in columns])
        right.bar([label for label, _ in columns], heights, bottom=bottom, label=phase)
        bottom += heights
    right.set(ylabel="ms per step", title="where a step goes, rank by rank")
    right.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.0, 1.0))
    plt.tight_layout()
    plt.show()


def spirals(x, t):
    """The training points of the spiral problem, coloured by arm (lesson 5)."""
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(4, 4))
    ax.scatter(*x.T, c=t, s=4, cmap="brg")
    ax.set(title="training data: three spiral arms", aspect="equal")
    plt.show()


def lr_warmup(epochs, curves, warmup):
    """Learning rate by epoch under linear scaling with warm-up (lesson 5).

    Args:
        epochs: the epochs at which the rates were read.
        curves: label -> the rate at each epoch.
        warmup: the warm-up, in epochs (for the title).
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(6, 3))
    for label, rates in curves.items():
        ax.plot(epochs, rates, label=label)
    ax.set(xlabel="epoch", ylabel="learning rate", xlim=(0, 4),
           title=f"linear scaling with {warmup} epoch of warm-up (first 4 epochs)")
    ax.legend(fontsize=8)
    plt.show()


def accuracy_vs_batch(batches, series, epochs):
    """Final test accuracy by global batch, one line per recipe (lesson 5).

    Args:
        batches: the global batch sizes.
        series: (label, accuracies, style) per recipe.
        epochs: the epochs every run trained for (for the axis label).
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 4))
    for name, accuracies, style in series:
        ax.plot(batches, accuracies, style, label=name)
    ax.set(xscale="log", xticks=batches, xticklabels=[str(b) for b in batches],
           xlabel="global batch (= 32 per rank × ranks)", ylabel=f"test accuracy after {epochs} epochs",
           title="accuracy vs global batch, fixed epochs")
    ax.axhline(1 / 3, color="gray", lw=0.8, ls=":")
    ax.text(batches[0], 1 / 3 + 0.01, "chance", color="gray", fontsize=8)
    ax.legend(fontsize=8)
    plt.show()


def bleu_vs_batch(batches, series, epochs):
    """The translator's final dev BLEU by global batch, one line per recipe (lesson 5).

    Args:
        batches: the global batch sizes.
        series: (label, BLEU scores, style) per recipe.
        epochs: the epochs every run trained for (for the axis label).
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 4))
    for name, scores, style in series:
        ax.plot(batches, scores, style, label=name)
    ax.set(xscale="log", xticks=batches, xticklabels=[str(b) for b in batches],
           xlabel="global batch (per-rank batch × ranks)",
           ylabel=f"dev BLEU after {epochs:g} epochs", title="the translator: BLEU vs global batch")
    ax.minorticks_off()
    ax.legend(fontsize=8)
    plt.show()


def bleu_curves(runs, title, marks=()):
    """Dev BLEU against the sentences seen, one line per run (lesson 5).

    Args:
        runs: label -> [(sentences seen, dev BLEU)], in order.
        title: the figure's title.
        marks: sentences seen at which something changes (drawn as dotted lines).
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 3.8))
    for (name, points), style in zip(runs.items(), ("o-", "s--", "^:", "d-.", "v-", "x--")):
        ax.plot(*zip(*points), style, label=name)
    for x in marks:
        ax.axvline(x, color="gray", lw=0.8, ls=":")
    ax.set(xlabel="sentences seen", ylabel="dev BLEU", title=title)
    ax.legend(fontsize=8)
    plt.show()


def schedules_compared(epochs, decayed_lr, lr, batch, grown_batch):
    """Decaying the rate beside growing the batch: rate and batch by epoch (lesson 5)."""
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3))
    left.step(epochs, decayed_lr, where="post", label="decay the rate")
    left.step(epochs, [lr] * len(epochs), "--", where="post", label="grow the batch (rate kept)")
    left.set(xlabel="epoch", ylabel="learning rate", yscale="log", title="learning rate")
    right.step(epochs, [batch] * len(epochs), where="post", label="decay the rate (batch kept)")
    right.step(epochs, grown_batch, "--", where="post", label="grow the batch")
    right.set(xlabel="epoch", ylabel="batch size", yscale="log", title="batch size")
    sizes = sorted(set(grown_batch))
    right.set_yticks(sizes, [str(b) for b in sizes])
    right.minorticks_off()
    for ax in (left, right):
        ax.legend(fontsize=8)
    plt.tight_layout()
    plt.show()


def smith_runs(runs):
    """Test loss per epoch and per update of each schedule (lesson 5).

    Args:
        runs: name -> history, a list of dicts with ``epoch``, ``updates`` and ``loss``.
    """
    plt = pyplot()

    _fig, (by_epoch, by_update) = plt.subplots(1, 2, figsize=(11, 3.8), sharey=True)
    for (name, history), style in zip(runs.items(), (":", "-", "--")):
        loss = [h["loss"] for h in history]
        by_epoch.plot([h["epoch"] for h in history], loss, style, marker=".", label=name)
        by_update.plot([h["updates"] for h in history], loss, style, marker=".", label=name)
    by_epoch.set(xlabel="epoch", ylabel="test loss", yscale="log", title="per epoch")
    by_update.set(xlabel="parameter updates", title="per update")
    for ax in (by_epoch, by_update):
        ax.legend(fontsize=8)
    plt.tight_layout()
    plt.show()


def scaling_report(report, phases):
    """Per-rank step breakdown at each rank count, and the scaling efficiency (lesson 8).

    Args:
        report: ``scaling.json``'s results: rank count (a string) -> its result.
        phases: the profiler's phases to stack, in order.
    """
    plt = pyplot()

    fig, (ax_bar, ax_eff) = plt.subplots(1, 2, figsize=(11, 3.6))
    labels, x = [], 0
    for k in sorted(report, key=int):
        for rank in report[k]["profile"]["ranks"]:
            bottom = 0
            for i, phase in enumerate(phases):
                ax_bar.bar(x, rank["ms"][phase], bottom=bottom, color=f"C{i}",
                           label=phase if x == 0 else None)
                bottom += rank["ms"][phase]
            labels.append(f"{k} rank(s)\nrank {rank['rank']}")
            x += 1
    ax_bar.set_xticks(range(len(labels)), labels)
    ax_bar.set(ylabel="ms per step", title="where a step goes, per rank")
    ax_bar.legend(fontsize=8, ncol=2)
    ks = sorted(report, key=int)
    ax_eff.plot([int(k) for k in ks], [report[k]["efficiency"] for k in ks], "o-")
    ax_eff.axhline(1, color="gray", lw=0.5)
    ax_eff.set(xlabel="ranks", ylabel="efficiency", ylim=(0, 1.15), xticks=[int(k) for k in ks],
               title="throughput(k) / (k x throughput(1))")
    fig.tight_layout()
    plt.show()


def link_model(ranks, models, links, predict, here, reach=None):
    """Ring allreduce time by rank count on typical links, one panel per model size (lesson 8).

    Args:
        ranks: the rank counts.
        models: title -> gradient bytes.
        links: link name -> (alpha in s, bandwidth in bytes/s).
        predict: ``predict(n_bytes, ranks, alpha, beta)`` in seconds.
        here: this machine's measured (alpha, beta), drawn dashed.
        reach: link name -> the most ranks it joins (NVLink: the GPUs of one node); a link
            not named reaches every rank count.
    """
    plt = pyplot()

    fig, axes = plt.subplots(1, 2, figsize=(12, 3.8))
    for ax, (title, n_bytes) in zip(axes, models.items()):
        for name, (alpha, bandwidth) in links.items():
            mine = [k for k in ranks if k <= (reach or {}).get(name, max(ranks))]
            ax.plot(mine, [1000 * predict(n_bytes, k, alpha, 1 / bandwidth) for k in mine],
                    "o-", ms=3, label=name)
        ax.plot(ranks, [1000 * predict(n_bytes, k, *here) for k in ranks],
                "k--", label="this machine (measured alpha, beta)")
        ax.set(xscale="log", yscale="log", xlabel="ranks", ylabel="ms per allreduce", title=title)
        ax.set_xticks(ranks, [str(k) for k in ranks])
    axes[0].legend(fontsize=7.5)
    fig.suptitle("ring allreduce time from the alpha-beta model (typical figures, not measurements)")
    fig.tight_layout()
    plt.show()
