"""Figures of lesson 6: sorting a failure, choosing a GPU, sharded BLEU, where a step goes."""
import numpy as np

from dlhack.figures.fonts import pyplot


def triage(outcomes):
    """From "the job went wrong" to what each outcome points at (lesson 6).

    Args:
        outcomes: (what was seen, where to look) pairs, drawn top to bottom.
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(10, 4.6))
    ax.axis("off")
    ax.text(0.0, 0.5, "the job\nwent wrong", fontsize=11, va="center",
            bbox={"boxstyle": "round", "fc": "#fde2e2"})
    for i, (what, then) in enumerate(outcomes):
        y = 0.95 - i * 0.225
        ax.annotate("", xy=(0.26, y), xytext=(0.155, 0.5),
                    arrowprops={"arrowstyle": "->", "color": "gray"})
        ax.text(0.27, y, what, fontsize=10.5, va="center", weight="bold",
                bbox={"boxstyle": "round", "fc": "#e8f0fb"})
        ax.text(0.27, y - 0.085, "-> " + then, fontsize=9.5, va="center")
    ax.set_xlim(0, 1)
    ax.set_ylim(-0.05, 1.05)
    ax.set_title("Sort the failure before reading the code (letters: the sections below)")
    plt.show()


def gpu_choice(cases):
    """Two nodes of two GPUs: which GPU each rank picks, one panel per case (lesson 6).

    Args:
        cases: (title, gpu_of) pairs, where ``gpu_of(rank)`` is the GPU that rank picks.
    """
    plt = pyplot()

    _fig, axes = plt.subplots(1, len(cases), figsize=(11, 2.6))
    for ax, (title, gpu_of) in zip(axes, cases):
        for node in (0, 1):
            x0 = node * 2.2
            ax.add_patch(plt.Rectangle((x0, 0), 2, 2, fill=False, ls="--", color="gray"))
            ax.text(x0 + 1, 2.1, f"node {node}", ha="center")
            for g in (0, 1):
                ax.add_patch(plt.Rectangle((x0 + 0.2 + g, 0.2), 0.6, 0.6, color="#cfe3cf"))
                ax.text(x0 + 0.5 + g, 0.5, f"GPU {g}", ha="center", va="center", fontsize=9)
            for i in (0, 1):
                rank = 2 * node + i
                ax.text(x0 + 0.5 + i, 1.6, f"rank {rank}", ha="center", fontsize=9,
                        bbox={"boxstyle": "round", "fc": "#e8f0fb"})
                g = gpu_of(rank)
                ax.annotate("", xy=(x0 + 0.5 + g, 0.85), xytext=(x0 + 0.5 + i, 1.45),
                            arrowprops={"arrowstyle": "->",
                                            "color": "tab:red" if g != i else "tab:blue"})
        ax.set_xlim(-0.1, 4.3)
        ax.set_ylim(0, 2.4)
        ax.axis("off")
        ax.set_title(title)
    plt.show()


def bleu_shards(shard_scores, full, n_sentences):
    """Each rank's shard BLEU and their mean, beside the corpus BLEU (lesson 6).

    Args:
        shard_scores: rank count -> the BLEU of each rank's shard.
        full: the corpus BLEU of all sentences.
        n_sentences: how many sentences (for the legend).
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(9, 3.4))
    first = min(shard_scores)
    for k, scores in shard_scores.items():
        ax.scatter([k] * k, scores, color="gray", s=18,
                   label="one rank's shard" if k == first else None)
        ax.scatter([k], [np.mean(scores)], color="tab:red", marker="s",
                   label="mean over ranks (wrong)" if k == first else None)
    ax.axhline(full, color="tab:blue", label=f"corpus BLEU of all {n_sentences} sentences")
    ax.set(xlabel="ranks", ylabel="BLEU", xticks=list(shard_scores),
           title="the mean of per-rank BLEU depends on the rank count; corpus BLEU does not")
    ax.legend(fontsize=8, loc="upper left", bbox_to_anchor=(1.01, 1))
    plt.show()
