"""The figure of ``dlhack bench scaling``: where a step goes at each rank count (stacked bars of
the phases), and the weak-scaling efficiency against the ranks, with the ceiling's line and each
run's fraction of it.

    plot(tables["results"], tables["ceiling"], tables["overlap"], out / "scaling.png")

Each table is ``{str(k): figures}`` as ``dlhack.bench.scaling.summarise`` makes them.
"""
from dlhack import step_profile


def plot(results, ceiling, overlap, path):
    """Write the two panels to ``path`` (PNG): the plain runs, the overlapped ones and the
    ceiling."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ranks = sorted(results, key=int)
    bars = [(f"{k}", results[k]) for k in ranks]
    bars += [(f"{k}\noverlap", overlap[k]) for k in ranks if k in overlap]
    bars += [(f"{k}\nalone", ceiling[k]) for k in ranks if k in ceiling]
    fig, (ax_bar, ax_eff) = plt.subplots(1, 2, figsize=(11, 3.8))
    bottom = [0.0] * len(bars)
    for phase in step_profile.PHASES:
        heights = [r["breakdown_ms"][phase] for _, r in bars]
        ax_bar.bar([label for label, _ in bars], heights, bottom=bottom, label=phase)
        bottom = [b + h for b, h in zip(bottom, heights)]
    ax_bar.set(xlabel="ranks", ylabel="ms per step (mean over ranks)",
               title="where a step goes")
    ax_bar.legend(fontsize=8)
    for name, table, style in (("as is", results, "o-"), ("overlapped", overlap, "s-"),
                               ("ceiling: k processes alone", ceiling, "k--")):
        ks = [k for k in ranks if k in table]
        if table is not results:
            ks = ["1"] + ks  # every line starts at the 1-rank run
        ax_eff.plot([int(k) for k in ks], [(table.get(k) or results[k])["efficiency"]
                                            for k in ks], style, label=name)
        for k in ks:
            if "of_ceiling" in (table.get(k) or {}):
                ax_eff.annotate(f"{table[k]['of_ceiling']:.2f} of ceiling",
                                (int(k), table[k]["efficiency"]), fontsize=8,
                                textcoords="offset points", xytext=(5, -12))
    ax_eff.axhline(1.0, color="gray", lw=0.5)
    ax_eff.set(xlabel="ranks", ylabel="weak-scaling efficiency", ylim=(0, 1.1),
               title="throughput(k) / (k x throughput(1))")
    ax_eff.legend(fontsize=8, loc="lower left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
