"""Figures of lessons 0 and 1: ranks on nodes, the translator, its data and its training."""
import numpy as np

from dlhack.figures.fonts import pyplot


def nodes_and_ranks():
    """Two nodes of two GPUs: rank, intra_rank and inter_rank of each process (lesson 0)."""
    plt = pyplot()
    from matplotlib.patches import FancyBboxPatch

    _fig, ax = plt.subplots(figsize=(9, 3.6))
    for node in range(2):
        x0 = 0.3 + node * 4.6
        ax.add_patch(FancyBboxPatch((x0, 0.3), 4.0, 2.9, boxstyle="round,pad=0.05",
                                    facecolor="#eef3fb", edgecolor="#5577aa"))
        ax.text(x0 + 2.0, 2.95, f"node {node}  (inter_rank {node})", ha="center", fontsize=11,
                weight="bold")
        for gpu in range(2):
            rank = 2 * node + gpu
            gx = x0 + 0.25 + gpu * 1.95
            ax.add_patch(FancyBboxPatch((gx, 0.55), 1.6, 2.0, boxstyle="round,pad=0.04",
                                        facecolor="#ffffff", edgecolor="#333333"))
            ax.text(gx + 0.8, 2.15, f"GPU {gpu}", ha="center", fontsize=10, color="#555555")
            ax.text(gx + 0.8, 1.55, f"rank {rank}", ha="center", fontsize=13, weight="bold")
            ax.text(gx + 0.8, 0.95, f"intra_rank {gpu}", ha="center", fontsize=10)
    ax.text(4.75, 0.0, "size = 4: mpiexec started 4 processes, one per GPU", ha="center")
    ax.set_xlim(0, 9.5)
    ax.set_ylim(-0.2, 3.4)
    ax.axis("off")
    plt.show()


def ja_labels(tokens, ja_font):
    """Tick labels for Japanese tokens: the tokens, or "ja0", "ja1", ... without a font."""
    return list(tokens) if ja_font else [f"ja{i}" for i in range(len(tokens))]


def alignment(en, ja, links, ja_font):
    """Lines between aligned English and Japanese words (lesson 1).

    Args:
        en: English words.
        ja: (Japanese word, romaji) pairs.
        links: (English index, Japanese index) pairs.
        ja_font: a font that draws Japanese, or None (romaji only).
    """
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(10, 2.6))
    ex = np.linspace(0.5, 8.5, len(en))
    jx = np.linspace(0, 9, len(ja))
    for i, j in links:
        ax.plot([ex[i], jx[j]], [1, 0], color="tab:blue", alpha=0.6)
    for x, word in zip(ex, en):
        ax.text(x, 1.08, word, ha="center", va="bottom", fontsize=12)
    for x, (word, romaji) in zip(jx, ja):
        label = f"{word}\n{romaji}" if ja_font else romaji
        ax.text(x, -0.08, label, ha="center", va="top", fontsize=12)
    ax.set_xlim(-0.5, 9.5)
    ax.set_ylim(-0.7, 1.4)
    ax.axis("off")
    ax.set_title("English (top) and Japanese (bottom): the verb moves to the end")
    plt.show()


def sentence_lengths(sources):
    """Histograms of sentence lengths, one panel per (name, pairs) corpus (lesson 1)."""
    plt = pyplot()

    fig, axes = plt.subplots(1, len(sources), figsize=(5 * len(sources), 3.2), squeeze=False)
    for ax, (name, pairs) in zip(axes[0], sources):
        bins = np.arange(0, 26) - 0.5
        ax.hist([len(e) for e, _ in pairs], bins=bins, alpha=0.6, label="English")
        ax.hist([len(j) for _, j in pairs], bins=bins, alpha=0.6, label="Japanese")
        ax.set(title=name, xlabel="tokens per sentence", ylabel="sentences")
        ax.legend()
    fig.tight_layout()
    plt.show()


def seq2seq():
    """The encoder-decoder with attention, unrolled over a short sentence (lesson 1)."""
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(11, 4.2))
    src = ["tom", "ate", "apples", "."]
    dec_in = ["<s>", "y₁", "y₂", "y₃", "y₄"]
    dec_out = ["y₁", "y₂", "y₃", "y₄", "<eos>"]
    box = {"boxstyle": "round,pad=0.35", "facecolor": "#e8f0fb", "edgecolor": "#4466aa"}
    dbox = {"boxstyle": "round,pad=0.35", "facecolor": "#fbeee8", "edgecolor": "#aa6644"}
    for i, word in enumerate(src):
        ax.annotate("", xy=(i, 1.55), xytext=(i, 0.45), arrowprops={"arrowstyle": "->"})
        ax.text(i, 0.2, word, ha="center", fontsize=12)
        ax.text(i, 1.8, "LSTM", ha="center", va="center", bbox=box)
        if i:
            ax.annotate("", xy=(i - 0.3, 1.8), xytext=(i - 0.7, 1.8),
                        arrowprops={"arrowstyle": "->"})
    ax.annotate("", xy=(4.7, 1.8), xytext=(3.3, 1.8),
                arrowprops={"arrowstyle": "->", "color": "#aa6644", "lw": 2})
    ax.text(4.0, 2.0, "final (h, c)", ha="center", fontsize=9, color="#aa6644")
    weights = [0.1, 0.7, 0.15, 0.05]  # an illustration: the step that predicts y₃ looks at "ate"
    for t, (word_in, word_out) in enumerate(zip(dec_in, dec_out)):
        x = 5 + t
        ax.annotate("", xy=(x, 1.55), xytext=(x, 0.45), arrowprops={"arrowstyle": "->"})
        ax.text(x, 0.2, word_in, ha="center", fontsize=12)
        ax.text(x, 1.8, "LSTM", ha="center", va="center", bbox=dbox)
        ax.annotate("", xy=(x, 3.35), xytext=(x, 2.05), arrowprops={"arrowstyle": "->"})
        ax.text(x, 3.5, word_out, ha="center", fontsize=12, weight="bold")
        if t:
            ax.annotate("", xy=(x - 0.3, 1.8), xytext=(x - 0.7, 1.8),
                        arrowprops={"arrowstyle": "->"})
    for i, w in enumerate(weights):  # attention from decoder step 2 back to every encoder output
        ax.annotate("", xy=(i, 2.05), xytext=(7, 2.6),
                    arrowprops={"arrowstyle": "-", "color": "tab:green", "lw": 0.5 + 6 * w,
                                    "connectionstyle": "arc3,rad=0.15"})
    ax.text(2.6, 3.05, "attention: weights over the encoder outputs", color="tab:green",
            fontsize=10)
    ax.text(1.5, -0.35, "encoder reads English", ha="center", color="#4466aa")
    ax.text(7, -0.35, "decoder writes Japanese (reads <s> y, predicts y <eos>)", ha="center",
            color="#aa6644")
    ax.set_xlim(-0.6, 9.6)
    ax.set_ylim(-0.6, 3.8)
    ax.axis("off")
    plt.show()


def training_curves(log):
    """Train and dev loss, and dev BLEU, per epoch of a training log (lesson 1)."""
    plt = pyplot()

    epochs = [entry["epoch"] for entry in log]
    fig, (ax_loss, ax_bleu) = plt.subplots(1, 2, figsize=(10, 3.4))
    ax_loss.plot(epochs, [e["main/loss"] for e in log], "o-", label="train")
    ax_loss.plot(epochs, [e["validation/main/loss"] for e in log], "o-", label="dev")
    ax_loss.set(xlabel="epoch", ylabel="loss per sentence", title="loss")
    ax_loss.legend()
    ax_bleu.plot(epochs, [e["validation/bleu"] for e in log], "o-", color="tab:green")
    ax_bleu.set(xlabel="epoch", ylabel="BLEU", title="dev BLEU", ylim=(0, 100))
    fig.tight_layout()
    plt.show()


def attention(weights, en, out_tokens, ja_font):
    """The attention weights (output steps, source words) of one translation (lesson 1)."""
    plt = pyplot()

    _fig, ax = plt.subplots(figsize=(0.6 * len(en) + 2, 0.4 * len(out_tokens) + 1.5))
    ax.imshow(weights, cmap="Greens", vmin=0, vmax=1)
    ax.set_xticks(range(len(en)), en, rotation=45, ha="right")
    ax.set_yticks(range(len(out_tokens)), ja_labels(out_tokens, ja_font))
    ax.set(xlabel="English (source)", ylabel="Japanese (output)", title="attention weights")
    plt.show()
