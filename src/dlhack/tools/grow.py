"""Training whose rank count grows mid-run: add workers instead of decaying the learning rate.

    dlhack grow --phases 1:2 2:1 4:1 --out result/grow -- --n-train 4000 --batchsize 16
    dlhack grow --phases 1:2 1:1:1e-3 1:1:5e-4 --out result/decay -- --n-train 4000 ...
    first = grow([Phase(1, 2)], ["--n-train", "4000"], out="result/first")
    run = grow([Phase(2, 1)], ["--n-train", "4000"], out="result/grow", after=first)
    run.phases[-1].dev_bleu, run.seconds, run.log     # the last phase's BLEU, wall time, curve
    decay = grow([Phase(1, 1, lr=1e-3)], [...], out="result/decay", after=first)  # a branch

A run is a list of phases. Each phase is one job, ``mpiexec -n RANKS python -m dlhack.train``,
that resumes from the snapshot the previous phase wrote when it ended and trains until its
epochs are done. The batch per rank stays the same, so the global batch grows with the ranks:
Smith et al.'s "increase the batch size" (2017), with ranks instead of a bigger batch on one
device. A phase may set its own rate (``RANKS:EPOCHS:LR``): the learning-rate decay it is
compared with is the same phases at one rank, the rate divided instead of the batch multiplied.

What carries over from phase to phase is the snapshot's (``dlhack.snapshot``): weights, Adam's
moments and step count, the iteration count, the place in the epoch (as a fraction, since the
shards change length), the log, the triggers, and the RNG state of every rank the last phase
had. What changes: the shards, dealt afresh for the new rank count, and the rate if the phase
sets one. ``--scale-lr`` among the training flags scales the rate with each phase's ranks.

Cost per phase: one job's start (Python, Chainer, the corpus: seconds), the test BLEU at its
end, one snapshot written and read (the weights and Adam's two moments).
Lesson 5: "Adding ranks instead of decaying the rate".
"""
import argparse
import dataclasses
import io
import json
import sys
from pathlib import Path

from dlhack.jobs.run import run as run_job
from dlhack.snapshot import NAME, find_snapshots

SNAPSHOT_EVERY = 1000  # iterations between a phase's own snapshots; each phase also ends on one


@dataclasses.dataclass(frozen=True)
class Phase:
    """``ranks`` ranks for ``epochs`` epochs, at rate ``lr`` (None: the training flags')."""

    ranks: int
    epochs: float
    lr: float = None

    @classmethod
    def parse(cls, text):
        """``"2:1"`` is 2 ranks for 1 epoch; ``"1:1:5e-4"`` is 1 rank for 1 epoch at 5e-4."""
        parts = text.split(":")
        if len(parts) not in (2, 3):
            raise ValueError(f"phase {text!r}: expected RANKS:EPOCHS or RANKS:EPOCHS:LR")
        lr = float(parts[2]) if len(parts) == 3 else None
        return cls(int(parts[0]), float(parts[1]), lr)


@dataclasses.dataclass
class PhaseResult:
    """What one phase did: its ``metrics.json`` (rank 0's), its job's wall time."""

    phase: Phase
    end_epoch: float
    seconds: float  # the job's wall time: start, training, evaluation, snapshot
    metrics: dict
    snapshot: Path  # the one it ended on: the next phase resumes it

    @property
    def dev_bleu(self):
        """The dev BLEU of the last evaluation in this phase (None without one)."""
        scores = [e["validation/bleu"] for e in self.metrics["log"] if "validation/bleu" in e]
        return scores[-1] if scores else None


@dataclasses.dataclass
class GrowResult:
    """A whole run: its phases, the wall time of all of them, the log of the whole run."""

    phases: list

    @property
    def seconds(self):
        return sum(p.seconds for p in self.phases)

    @property
    def log(self):
        """The LogReport of the whole run: each phase resumed the one before it."""
        return self.phases[-1].metrics["log"]


def phase_command(phase, end_epoch, train_args, out, resume=None):
    """What every rank of a phase runs: ``dlhack train`` to ``end_epoch`` in ``out``."""
    argv = [sys.executable, "-m", "dlhack.train", "--snapshot-every", str(SNAPSHOT_EVERY),
            *map(str, train_args), "--epochs", f"{end_epoch:g}", "--out", str(out)]
    if phase.lr is not None:
        argv += ["--lr", repr(phase.lr)]
    if resume is not None:
        argv += ["--resume", str(resume)]
    return argv


def grow(phases, train_args=(), out="result/grow", timeout=900, stream=None, after=None):
    """Run ``phases`` one after the other in ``out``, each resuming the previous one's end.

    Args:
        phases: ``Phase`` objects (or ``"RANKS:EPOCHS[:LR]"`` strings).
        train_args: ``dlhack train`` flags for every phase (not ``--epochs``, ``--out``).
        out: a folder without snapshots (a stale one could be taken for a phase's end).
        timeout: seconds per phase before its stacks are dumped and it is killed.
        stream: where the phases' rank-marked lines go (default: nowhere).
        after: a ``GrowResult`` whose end the first phase resumes: runs that share their
            first phases branch from one run of them.

    Returns:
        A ``GrowResult``. Raises ``RuntimeError`` (with the job's last lines) if a phase fails.
    """
    phases = [p if isinstance(p, Phase) else Phase.parse(p) for p in phases]
    out = Path(out)
    if find_snapshots(out):
        raise FileExistsError(f"{out} already holds snapshots; give grow a fresh --out")
    results, end, resume = [], 0.0, None
    if after is not None:
        end, resume = after.phases[-1].end_epoch, after.phases[-1].snapshot
    for phase in phases:
        end += phase.epochs
        argv = phase_command(phase, end, train_args, out, resume)
        job = run_job(argv, phase.ranks, timeout=timeout, threads=1,
                      stream=stream or io.StringIO())
        if job.returncode != 0:
            tail = "\n".join(job.output.get(0, [])[-15:])
            raise RuntimeError(f"phase {phase} ended with exit status {job.returncode}:\n"
                               f"{tail}\n{job.errors}")
        metrics = json.loads((out / "metrics.json").read_text(encoding="utf-8"))
        resume = out / NAME.format(metrics["iterations"])  # the snapshot this phase ended on
        results.append(PhaseResult(phase, end, job.seconds, metrics, resume))
    return GrowResult(results)


def table(run):
    """One line per phase: ranks, global batch, rate, epochs done, dev BLEU, wall seconds."""
    lines = ["ranks  batch       lr  epochs  dev BLEU  seconds"]
    for p in run.phases:
        m = p.metrics
        lr = m["config"]["lr"]  # the phase's own, or the flags'
        lines.append(f"{p.phase.ranks:>5} {m['global_batchsize']:>6} {lr:>8.2g} "
                     f"{p.end_epoch:>7g} {p.dev_bleu or float('nan'):>9.1f} {p.seconds:>8.1f}")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(
        prog="dlhack grow", description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("-p", "--phases", nargs="+", type=Phase.parse, required=True,
                        help="RANKS:EPOCHS or RANKS:EPOCHS:LR, one per phase, in order")
    parser.add_argument("-o", "--out", default="result/grow", help="a folder without snapshots")
    parser.add_argument("-t", "--timeout", type=float, default=900, help="seconds per phase")
    parser.add_argument("-v", "--verbose", action="store_true", help="show every rank's lines")
    parser.add_argument("train_args", nargs=argparse.REMAINDER,
                        help="after --: dlhack train's flags for every phase")
    args = parser.parse_args(argv)
    train_args = args.train_args[1:] if args.train_args[:1] == ["--"] else args.train_args
    run = grow(args.phases, train_args, args.out, args.timeout,
               stream=sys.stdout if args.verbose else None)
    print(table(run))
    print(f"{run.seconds:.1f} s in all; log and model in {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
