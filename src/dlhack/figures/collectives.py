"""Figures of lesson 2: data parallelism, star and ring, the ring's steps, the cost of a collective."""
import numpy as np

from dlhack.figures.fonts import pyplot


def _box(ax, x, y, w, h, text, color, fontsize=9):
    plt = pyplot()
    ax.add_patch(plt.Rectangle((x, y), w, h, facecolor=color, edgecolor="black", lw=0.8))
    ax.text(x + w / 2, y + h / 2, text, ha="center", va="center", fontsize=fontsize)


def _arrow(ax, start, end, color="black"):
    ax.annotate("", xy=end, xytext=start, arrowprops={"arrowstyle": "->", "color": color, "lw": 1.2})


def data_parallel(p=3):
    """A batch split over ``p`` ranks, each a whole model, gradients averaged (lesson 2)."""
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(9, 4.6))
    colors = plt.cm.Pastel1(np.arange(p))
    width = 8.0 / p
    _box(ax, 0.5, 8.3, 8.0, 0.8, "one mini-batch of p x b examples", "whitesmoke")
    for r in range(p):
        x = 0.5 + r * width + 0.15
        w = width - 0.3
        _box(ax, x, 6.6, w, 0.7, f"shard {r}: b examples", colors[r])
        _arrow(ax, (x + w / 2, 8.3), (x + w / 2, 7.3))
        _box(ax, x, 4.6, w, 1.4, f"rank {r}\nmodel copy, weights w\nforward + backward", "white")
        _arrow(ax, (x + w / 2, 6.6), (x + w / 2, 6.0))
        _box(ax, x, 3.2, w, 0.8, f"gradient $g_{r}$", colors[r])
        _arrow(ax, (x + w / 2, 4.6), (x + w / 2, 4.0))
        _arrow(ax, (x + w / 2, 3.2), (4.5, 2.1), color="tab:blue")
        _arrow(ax, (4.5, 1.3), (x + w / 2, 0.7), color="tab:green")
        ax.text(x + w / 2, 0.35, "w -= lr * mean", ha="center", fontsize=8, color="tab:green")
    _box(ax, 2.3, 1.3, 4.4, 0.8, r"allreduce: $\bar g = \frac{1}{p}\sum_r g_r$ on every rank",
         "lightsteelblue")
    ax.set(xlim=(0, 9), ylim=(0, 9.3))
    ax.axis("off")
    ax.set_title("data parallelism: every rank the whole model, its own shard of the batch")
    plt.show()


def parallelisms():
    """Data parallel (two whole copies) beside model parallel (layers over ranks) (lesson 2)."""
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(10, 3.6))
    layer_colors = ["#cfe8ff", "#ffe2c6", "#d9f2d0"]
    for r in range(2):  # data parallel: two full copies
        x = 0.5 + 2.4 * r
        for i, c in enumerate(layer_colors):
            _box(left, x, 1.0 + i * 0.9, 1.8, 0.8, f"layer {i + 1}", c)
        _box(left, x, 0.0, 1.8, 0.7, f"data shard {r}", "whitesmoke")
        left.text(x + 0.9, 3.85, f"rank {r}", ha="center")
    _arrow(left, (2.3, 2.4), (2.9, 2.4), color="tab:blue")
    _arrow(left, (2.9, 2.2), (2.3, 2.2), color="tab:blue")
    left.text(2.6, 3.5, "gradients\n(once a step)", ha="center", fontsize=8, color="tab:blue")
    left.set(xlim=(0, 5.3), ylim=(-0.2, 4.3), title="data parallel")
    left.axis("off")
    for i, c in enumerate(layer_colors):  # model parallel: layers spread over ranks
        x = 0.3 + 1.7 * i
        _box(right, x, 1.5, 1.3, 0.9, f"layer {i + 1}", c)
        right.text(x + 0.65, 2.75, f"rank {i}", ha="center")
        if i:
            _arrow(right, (x - 0.4, 2.05), (x, 2.05), color="tab:red")
            _arrow(right, (x, 1.75), (x - 0.4, 1.75), color="tab:purple")
    _box(right, 0.3, 0.2, 4.7, 0.7, "one batch flows through every rank", "whitesmoke")
    right.text(2.6, 3.5, "activations forward (red), their gradients back (purple),\n"
               "inside every step", ha="center", fontsize=8)
    right.set(xlim=(0, 5.3), ylim=(-0.2, 4.3), title="model parallel")
    right.axis("off")
    plt.show()


def star_and_ring(p=4):
    """Every message through rank 0 beside a ring where every link is busy at once (lesson 2)."""
    plt = pyplot()

    _fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.8))
    angles = np.pi / 2 - 2 * np.pi * np.arange(p) / p
    pos = np.stack([np.cos(angles), np.sin(angles)], axis=1)
    for r in range(1, p):  # the star: every message goes through rank 0, in the middle
        end = pos[r] * 0.75
        left.annotate("", xy=(0.12 * pos[r]), xytext=end,
                      arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 1.2,
                                      "connectionstyle": "arc3,rad=0.15"})
        left.annotate("", xy=end, xytext=(0.12 * pos[r]),
                      arrowprops={"arrowstyle": "->", "color": "tab:green", "lw": 1.2,
                                      "connectionstyle": "arc3,rad=0.15"})
        left.add_patch(plt.Circle(pos[r], 0.17, color="lightgray"))
        left.text(*pos[r], str(r), ha="center", va="center")
    left.add_patch(plt.Circle((0, 0), 0.17, color="gold"))
    left.text(0, 0, "0", ha="center", va="center")
    left.set_title(f"through a root: rank 0 moves {2 * (p - 1)} whole arrays", fontsize=9)
    for r in range(p):  # the ring: r -> r + 1, all links busy at once
        a, b = pos[r], pos[(r + 1) % p]
        right.annotate("", xy=a + 0.8 * (b - a), xytext=a + 0.2 * (b - a),
                       arrowprops={"arrowstyle": "->", "color": "tab:blue", "lw": 1.5})
        right.add_patch(plt.Circle(a, 0.17, color="lightgray"))
        right.text(*a, str(r), ha="center", va="center")
    right.set_title(f"around a ring: each rank sends {2 * (p - 1)} chunks of n/{p}", fontsize=9)
    for ax in (left, right):
        ax.set(xlim=(-1.4, 1.4), ylim=(-1.3, 1.3), aspect="equal")
        ax.axis("off")
    plt.show()


def ring_steps(states):
    """One panel per step of a ring allreduce: whose contributions each chunk holds (lesson 2).

    Args:
        states: (title, have, received) per step, where ``have[r][c]`` is the set of ranks whose
            contributions rank r's copy of chunk c holds and ``received`` the (rank, chunk)
            pairs that just arrived (outlined in red).
    """
    plt = pyplot()

    p = len(states[0][1])
    _fig, axes = plt.subplots(1, len(states), figsize=(2.3 * len(states), 2.6))
    for ax, (title, have, received) in zip(axes, states):
        counts = np.array([[len(h) for h in row] for row in have])
        ax.imshow(counts, cmap="Greens", vmin=0, vmax=p + 1.5)
        for r in range(p):
            for c in range(p):
                label = "+".join(str(k) for k in sorted(have[r][c]))
                done = len(have[r][c]) == p
                ax.text(c, r, label, ha="center", va="center", fontsize=8,
                        color="white" if done else "black", weight="bold" if done else None)
        for r, c in received:
            ax.add_patch(plt.Rectangle((c - 0.5, r - 0.5), 1, 1, fill=False, ec="red", lw=2))
        ax.set_xticks(range(p), [f"c{c}" for c in range(p)], fontsize=8)
        ax.set_yticks(range(p), [f"rank {r}" for r in range(p)], fontsize=8)
        ax.set_title(title, fontsize=8)
    plt.tight_layout()
    plt.show()


def cost_model(t_naive, t_ring, alpha, beta):
    """Predicted allreduce time through a root and around a ring, by size and by ranks (lesson 2).

    Args:
        t_naive, t_ring: the lesson's formulas, ``f(n, p, alpha, beta)`` in seconds.
        alpha: seconds per message; beta: seconds per byte.
    """
    plt = pyplot()

    sizes = np.logspace(3, 9, 61)  # 1 KB .. 1 GB
    _fig, (left, right) = plt.subplots(1, 2, figsize=(11, 4))
    for p, color in zip((4, 16, 64), ("tab:blue", "tab:orange", "tab:red")):
        left.loglog(sizes, t_naive(sizes, p, alpha, beta), "--", color=color, label=f"root, p={p}")
        left.loglog(sizes, t_ring(sizes, p, alpha, beta), "-", color=color, label=f"ring, p={p}")
    left.set(xlabel="message size n (bytes)", ylabel="predicted time (s)",
             title="time vs message size")
    left.legend(fontsize=8)
    ranks = np.arange(2, 65)
    for n, color in ((4e6, "tab:green"), (400e6, "tab:purple")):
        right.plot(ranks, t_naive(n, ranks, alpha, beta) * 1e3, "--", color=color,
                   label=f"root, n={n / 1e6:g} MB")
        right.plot(ranks, t_ring(n, ranks, alpha, beta) * 1e3, "-", color=color,
                   label=f"ring, n={n / 1e6:g} MB")
    right.set(xlabel="ranks p", ylabel="predicted time (ms)", yscale="log",
              title="time vs rank count")
    right.legend(fontsize=8)
    plt.tight_layout()
    plt.show()


def allreduce_fit(rows, lines, p):
    """Measured allreduce times (points) and the fitted ``A + B n`` lines (lesson 2).

    Args:
        rows: ``dlhack bench allreduce`` rows (``algorithm``, ``bytes``, ``median_s``).
        lines: algorithm -> (A, B) of its fitted line; ``copy`` is drawn without one.
        p: the rank count of the measurement.
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(7, 4.5))
    for name, color in (("naive", "tab:red"), ("ring", "tab:blue"), ("mpi", "tab:green"),
                        ("copy", "gray")):
        mine = [r for r in rows if r["algorithm"] == name]
        n = np.array([r["bytes"] for r in mine], float)
        t = np.array([r["median_s"] for r in mine])
        ax.loglog(n, t, "o", color=color, label=f"{name} (measured)")
        if name not in lines:
            continue
        A, B = lines[name]
        grid = np.logspace(np.log10(n[0]), np.log10(n[-1]), 50)
        ax.loglog(grid, A + B * grid, "-", color=color, alpha=0.6, label=f"{name} (fit)")
    ax.set(xlabel="message size (bytes)", ylabel="median time (s)",
           title=f"allreduce at {p} ranks on this machine: measured and fitted")
    ax.legend(fontsize=8)
    plt.show()
