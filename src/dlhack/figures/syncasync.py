"""Figures of lesson 4: parameter server and ring, sync and async timelines, staleness."""
import numpy as np

from dlhack.figures.fonts import pyplot

COLORS = {"sync": "tab:blue", "async": "tab:orange", "allreduce": "tab:green"}
STYLES = {"sync": "-", "async": "-", "allreduce": "--"}


def topologies(n_workers=4):
    """A parameter server's star beside a ring of peers (lesson 4)."""
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.8))
    angles = np.pi / 2 - 2 * np.pi * np.arange(n_workers) / n_workers
    pos = 1.2 * np.stack([np.cos(angles), np.sin(angles)], axis=1)
    for w, (x, y) in enumerate(pos):  # the star: push up, pull down
        for color in ("tab:red", "tab:green"):
            start, end = ((x, y), (0, 0)) if color == "tab:red" else ((0, 0), (x, y))
            left.annotate("", xy=end, xytext=start, arrowprops={
                "arrowstyle": "->", "color": color, "lw": 1.3, "shrinkA": 16, "shrinkB": 16,
                "connectionstyle": "arc3,rad=0.25"})
        left.add_patch(plt.Circle((x, y), 0.22, color="lightsteelblue"))
        left.text(x, y, f"W{w + 1}", ha="center", va="center", fontsize=9)
    left.add_patch(plt.Circle((0, 0), 0.3, color="gold"))
    left.text(0, 0, "server", ha="center", va="center", fontsize=8)
    left.text(-1.7, -1.75, "red: push gradient   green: pull parameters", fontsize=8)
    left.set_title("parameter server: the server moves 2 W n numbers a round", fontsize=9)
    for w, (x, y) in enumerate(pos):  # the ring: every link busy at once
        nx, ny = pos[(w + 1) % n_workers]
        right.annotate("", xy=(nx, ny), xytext=(x, y), arrowprops={
            "arrowstyle": "->", "color": "tab:blue", "lw": 1.3, "shrinkA": 16, "shrinkB": 16,
            "connectionstyle": "arc3,rad=-0.25"})
        right.add_patch(plt.Circle((x, y), 0.22, color="lightsteelblue"))
        right.text(x, y, f"W{w + 1}", ha="center", va="center", fontsize=9)
    right.set_title("peer to peer (ring allreduce): each rank moves about 2n", fontsize=9)
    for ax in (left, right):
        ax.set(xlim=(-1.8, 1.8), ylim=(-1.9, 1.7), aspect="equal")
        ax.axis("off")
    plt.tight_layout()
    plt.show()


def timelines(runs, compute, until):
    """Workers' gradients over time, synchronous above asynchronous (lesson 4).

    Args:
        runs: ``{True: (bars, updates), False: (bars, updates)}`` (synchronous or not), as the
            lesson's ``simulate`` returns them: bars (worker, start, end, staleness) and the
            times of the server's updates.
        compute: each worker's time for one gradient.
        until: where the time axis ends.
    """
    plt = pyplot()

    _fig, axes = plt.subplots(2, 1, figsize=(10, 4.2), sharex=True)
    for ax, synchronous in zip(axes, (True, False)):
        bars, updates = runs[synchronous]
        for w, start, end, stale in bars:
            ax.barh(w, end - start, left=start, height=0.6, color="lightsteelblue", edgecolor="k")
            if not synchronous:
                ax.text((start + end) / 2, w, str(stale), ha="center", va="center",
                        fontsize=9, color="darkred" if stale else "black")
        if synchronous:  # waiting for the slowest worker
            for w, start, end, _ in bars:
                rnd = max(compute)
                ax.barh(w, start + rnd - end, left=end, height=0.6, color="0.9", hatch="//",
                        edgecolor="0.6")
        for t in updates:
            ax.axvline(t, color="tab:red", lw=0.8, alpha=0.6)
        ax.set_yticks(range(len(compute)), [f"worker {w + 1}" for w in range(len(compute))])
        ax.invert_yaxis()
        ax.set_title(f"{'synchronous' if synchronous else 'asynchronous'}: "
                     f"{len(updates)} server updates (red lines) by t = {until:g}", fontsize=9)
    axes[1].set_xlabel("time (one unit = one gradient on a fast worker)")
    plt.tight_layout()
    plt.show()


def async_runs(runs, title):
    """Loss by update and by time for sync, async and allreduce, and async's staleness (lesson 4).

    Args:
        runs: mode -> the run's result (``curve``, ``updates``, ``staleness``).
        title: the figure's title.
    """
    plt = pyplot()

    fig, (by_update, by_time, hist) = plt.subplots(1, 3, figsize=(14, 3.8))
    for mode, r in runs.items():
        c = r["curve"]
        label = f"{mode} ({r['updates']} updates)"
        by_update.plot(c["update"], c["loss"], STYLES[mode], color=COLORS[mode], label=label)
        by_time.plot(c["time"], c["loss"], STYLES[mode], color=COLORS[mode], label=mode)
    by_update.set(xlabel="server updates", ylabel="loss on all data", xscale="log",
                  title="loss vs updates")
    by_time.set(xlabel="wall-clock time (s)", title="loss vs time")
    for ax in (by_update, by_time):
        ax.legend(fontsize=8)
    stale = np.array(runs["async"]["staleness"])
    hist.hist(stale, bins=np.arange(stale.max() + 2) - 0.5, color=COLORS["async"], log=True)
    hist.set(xlabel="staleness (updates)", ylabel="gradients (log scale)",
             title=f"async: staleness of {len(stale)} gradients")
    fig.suptitle(title, fontsize=10)
    plt.tight_layout()
    plt.show()


def staleness_by_source(stale, sources, straggler=1):
    """Stacked histogram of staleness: fast workers' gradients and the straggler's (lesson 4)."""
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 3.2))
    bins = np.arange(stale.max() + 2) - 0.5
    ax.hist([stale[sources != straggler], stale[sources == straggler]], bins=bins, stacked=True,
            log=True, color=["tab:orange", "tab:red"],
            label=["fast workers", f"the straggler (rank {straggler})"])
    ax.set(xlabel="staleness (updates)", ylabel="gradients (log scale)",
           title="async with a straggler: whose gradients are stale")
    ax.legend()
    plt.tight_layout()
    plt.show()


def staleness_by_rate(curves, by_lr, lrs, colors):
    """Loss curves at the largest rate, and late-run loss by learning rate (lesson 4).

    Args:
        curves: name -> (gradients used, loss) at the largest learning rate.
        by_lr: name -> the mean loss of the second half of the run, one per rate in ``lrs``.
        lrs: the learning rates.
        colors: name -> colour.
    """
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(13, 3.8))
    for name, (used, loss) in curves.items():
        left.plot(used, loss, color=colors[name], lw=1, label=name)
    left.set(xlabel="gradients used", ylabel="loss on all data",
             title=f"learning rate {max(lrs):g}: loss during training")
    left.legend(fontsize=8)
    for name, values in by_lr.items():
        right.plot(lrs, values, "o-", color=colors[name], label=name)
    right.set(xscale="log", xlabel="learning rate", ylabel="mean loss, second half of the run",
              title="what staleness costs, by learning rate")
    right.set_xticks(lrs, [f"{lr:g}" for lr in lrs])
    right.minorticks_off()
    right.legend(fontsize=8)
    plt.tight_layout()
    plt.show()


def divergence(curves, colors, lr):
    """Loss relative to the start, log scale, for runs at one learning rate (lesson 4).

    Args:
        curves: name -> (gradients used, loss after each update / loss at the start); a
            diverged run's curve stops where its loss stops being a finite number.
        colors: name -> colour.
        lr: the learning rate, for the title.
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 3.6))
    for name, (used, loss) in curves.items():
        loss = np.asarray(loss, dtype=np.float64)
        finite = np.isfinite(loss)
        end = len(loss) if finite.all() else int(np.argmin(finite))
        ax.plot(np.asarray(used)[:end], loss[:end], color=colors[name], lw=1,
                label=name + ("" if finite.all() else " (overflowed)"))
    ax.axhline(1, color="gray", lw=0.8, ls=":")
    ax.set(yscale="log", xlabel="gradients used", ylabel="loss / loss at the start",
           title=f"least squares, learning rate {lr:g}")
    ax.legend(fontsize=8)
    plt.tight_layout()
    plt.show()
