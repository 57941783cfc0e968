"""``dlhack bench scaling``'s report: each run against the ceiling of its own repeat, the
table, each run's breakdown per step, and where the k-rank step's time goes beyond its ceiling's.

The breakdowns printed under the table are each row's median run (by throughput), so two rows'
tables may come from different repeats, minutes apart on a noisy machine. ``paired_phases``
compares them repeat by repeat instead: each phase of the k-rank run less the same phase of
the ceiling run of the same repeat, and the median of those differences over the repeats.
``waits_against_floor`` does the same for the wait against the machine's own floor (``--floor``):
equal matrix products with a barrier after each step wait too, on a machine whose cores jitter.
"""
import statistics

from dlhack import step_profile
from dlhack.step_profile import PHASES


def paired_phases(tables):
    """For every k with a ceiling, ``paired_ms`` in each run's figures at k (the plain run's
    and each variant's): per phase (and "step", the whole), the median over repeats of the run's
    mean ms per step less its ceiling's in the same repeat; with "ceiling_step", the ceiling's
    median step."""
    for key, ceiling in tables["ceiling"].items():
        alone = [step_profile.mean_breakdown(c["profile"]) for c in ceiling["runs"]]
        for _, table in set_against(tables, key):
            pairs = list(zip((step_profile.mean_breakdown(r["profile"])
                              for r in table[key]["runs"]), alone))
            paired = {p: statistics.median(r[p] - c[p] for r, c in pairs) for p in PHASES}
            paired["step"] = statistics.median(sum(r.values()) - sum(c.values())
                                               for r, c in pairs)
            paired["ceiling_step"] = statistics.median(sum(c.values()) for _, c in pairs)
            table[key]["paired_ms"] = paired


def format_paired(label, paired):
    """One line: where a run's step goes beyond its ceiling's (``paired_phases``)."""
    phases = ", ".join(f"{p} {paired[p]:+.1f}" for p in PHASES)
    return (f"{label}: {phases}; the step {paired['step']:+.1f} ms of "
            f"{paired['ceiling_step']:.1f} ({paired['step'] / paired['ceiling_step']:+.1%})")


def against_ceiling(tables):
    """Each repeat's k-rank run over the ceiling run of that repeat, as ``of_ceiling`` (and,
    in the plain run's figures, a variant's as ``<variant>_of_ceiling``)."""
    results = tables["results"]
    for key, c in tables["ceiling"].items():
        results[key]["ceiling_efficiency"] = c["efficiency"]
        for name, table in set_against(tables, key):
            each = [m["sentences_per_sec"] / a["sentences_per_sec"]
                    for m, a in zip(table[key]["runs"], c["runs"])]
            table[key]["of_ceiling_repeats"] = each
            table[key]["of_ceiling"] = statistics.median(each)
            results[key]["of_ceiling" if name == "results" else f"{name}_of_ceiling"] = (
                table[key]["of_ceiling"])


def wait_shares(waits_ms, step_ms):
    """``(mean, most)``: the ranks' waits per step as shares of the step, their mean and the
    largest."""
    shares = [w / step_ms for w in waits_ms]
    return sum(shares) / len(shares), max(shares)


def waits_against_floor(tables, key, floors):
    """The wait of each run at ``key`` ranks (the plain run, then each variant) beside the
    machine's floor (``sync_floor.measure``'s ``floors``, one per repeat), as shares of a step:
    ``{"floor": (mean, most), name: {"mean", "most", "beyond"}}``, with the medians over the
    repeats of the ranks' mean share and of the largest, and "beyond" the median over the
    repeats of the run's mean share less the floor's of the same repeat."""
    floor = [wait_shares(f["wait_ms"], f["step_ms"]) for f in floors]
    result = {"floor": tuple(statistics.median(f[i] for f in floor) for i in (0, 1))}
    for name, table in set_against(tables, key):
        runs = [wait_shares([rank["ms"]["wait"] for rank in r["profile"]["ranks"]],
                            sum(step_profile.mean_breakdown(r["profile"]).values()))
                for r in table[key]["runs"]]
        result[name] = {"mean": statistics.median(r[0] for r in runs),
                        "most": statistics.median(r[1] for r in runs),
                        "beyond": statistics.median(r[0] - f[0] for r, f in zip(runs, floor))}
    return result


def print_waits(key, waits):
    """``waits_against_floor``'s figures, one line each."""
    labels = dict(((name, label) for label, name in VARIANTS), results=f"{key} rank(s)")
    mean, most = waits["floor"]
    print(f"{key} rank(s), the wait as a share of the step (median of the repeats: the ranks' "
          f"mean, and the rank that waits most):\n{'the floor':>18}: {mean:.1%} ({most:.1%})")
    for name, figures in waits.items():
        if name != "floor":
            print(f"{labels[name]:>18}: {figures['mean']:.1%} ({figures['most']:.1%}); beyond "
                  f"the floor of its repeat, {100 * figures['beyond']:+.1f} points")


VARIANTS = (("overlapped", "overlap"), ("Python gc", "gc_off"), ("other comm.", "other"),
            ("whole update", "whole"), ("memory given back", "given_back"),
            ("speed shares", "speed"), ("alone (ceiling)", "ceiling"))


def set_against(tables, key):
    """``[(name, table)]`` of the runs at ``key`` ranks that the ceiling is set against: the
    plain run ("results"), then each variant that ran."""
    names = ["results"] + [name for _, name in VARIANTS if name != "ceiling"]
    return [(name, tables[name]) for name in names if key in tables[name]]


def print_report(args, tables):
    """The table of throughput and efficiencies, then each run's breakdown per step."""
    results = tables["results"]
    one = results["1"]["median"]
    print(f"\n{'run':>18} {'sentences/s':>12} {'speed-up':>9} {'efficiency':>11} "
          f"{'of ceiling':>11}")
    for k in args.ranks:
        rows = [(f"{k} rank(s)", results)] + [(f"{k} {name}", tables[key])
                                              for name, key in VARIANTS if str(k) in tables[key]]
        for label, table in rows:
            r = table[str(k)]
            frac = f"{r['of_ceiling']:>11.3f}" if "of_ceiling" in r else f"{'':>11}"
            each = ", ".join(f"{x:.3f}" for x in r.get("of_ceiling_repeats", []))
            each = f"   (per repeat: {each})" if each else ""
            print(f"{label:>18} {r['median']:>12.1f} {r['median'] / one:>9.2f} "
                  f"{r['efficiency']:>11.3f} {frac}{each}")
    titles = {"overlap": "overlapped (backward includes the allreduce it hides)",
              "gc_off": "with Python's own garbage collector (--gc-every 0)",
              "other": f"with --communicator {args.compare_communicator}",
              "whole": "with --no-shard-update (every rank takes the whole optimizer step)",
              "given_back": "with --no-keep-memory (freed memory goes back to the OS)",
              "speed": "with --balance-speed (shares that follow each rank's speed)",
              "ceiling": "alone, side by side (no MPI)"}
    for k in args.ranks:
        profile = results[str(k)]["profile"]
        print(f"\n{k} rank(s), ms per step:\n{step_profile.format_breakdown(profile)}")
        if k > 1:
            print(f"{step_profile.format_waits(profile)}\n{results[str(k)]['verdict']}")
        for key, title in ((key, title) for key, title in titles.items() if str(k) in tables[key]):
            profile = tables[key][str(k)]["profile"]
            waits = "" if key == "ceiling" else "\n" + step_profile.format_waits(profile)
            print(f"{k} {'processes' if key == 'ceiling' else 'rank(s)'} {title}, "
                  f"ms per step:\n{step_profile.format_breakdown(profile)}{waits}")
        paired = [(f"{k} rank(s)" if key == "results" else name, tables[key][str(k)])
                  for name, key in (("", "results"), *VARIANTS) if str(k) in tables[key]]
        if any("paired_ms" in figures for _, figures in paired):  # the tables above may
            print(f"{k} rank(s) against the ceiling of the same repeat, ms per step (median "
                  "of the repeats' differences):")            # come from other repeats
            for label, figures in paired:
                if "paired_ms" in figures:
                    print(format_paired(f"{label:>18}", figures["paired_ms"]))
