"""Train on a real corpus (small_parallel_enja format) within a time budget; report test BLEU.

    dlhack bench corpus                                   # ../shared/data/small_parallel_enja
    dlhack bench corpus --corpus DIR --minutes 25 --ranks 2 --units 256 --layers 2

Data-parallel under mpiexec (one BLAS thread per rank), through ``python -m
dlhack.bench.training``: ``dlhack train`` with a time budget. Training stops at ``--epochs`` or
after ``--minutes``, whichever comes first; dev BLEU is reported every epoch, test BLEU and
sample translations at the end. For scale: an LSTM with attention (512 units, 30 epochs) is
reported at about 37 BLEU on small_parallel_enja.

Cost: ``--minutes`` of training on ``--ranks`` cores, plus loading and evaluation.
"""
import argparse
import json
import subprocess
import sys
from pathlib import Path

from dlhack.bench.model import blas_info
from dlhack.jobs.mpiexec import mpiexec_command

DEFAULT_CORPUS = Path(__file__).resolve().parents[3].parent / "shared/data/small_parallel_enja"


def main(argv=None):
    p = argparse.ArgumentParser(prog="dlhack bench corpus", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-c", "--corpus", default=str(DEFAULT_CORPUS))
    p.add_argument("-m", "--minutes", type=float, default=25)
    p.add_argument("-n", "--ranks", type=int, default=2)
    p.add_argument("-u", "--units", type=int, default=256)
    p.add_argument("-l", "--layers", type=int, default=2)
    p.add_argument("-b", "--batchsize", type=int, default=64, help="per rank")
    p.add_argument("-e", "--epochs", type=float, default=30)
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--dropout", type=float, default=0.2)
    p.add_argument("-o", "--out", default="result/bench/corpus")
    args = p.parse_args(argv)
    if not (Path(args.corpus) / "train.en").exists():
        print(f"no corpus at {args.corpus}: pass --corpus DIR (small_parallel_enja format)")
        return 2
    print(f"BLAS: {blas_info()}; {args.ranks} ranks x 1 thread; budget {args.minutes} min")
    cmd, env = mpiexec_command(args.ranks, [
        sys.executable, "-m", "dlhack.bench.training", "--corpus", args.corpus,
        "--units", args.units, "--layers", args.layers, "--batchsize", args.batchsize,
        "--epochs", args.epochs, "--minutes", args.minutes, "--vocab-size", args.vocab_size,
        "--dropout", args.dropout, "--no-progress", "--out", args.out])
    subprocess.run(cmd, env=env, check=True)
    metrics = json.loads((Path(args.out) / "metrics.json").read_text())
    print(f"\nsmall_parallel_enja test BLEU {metrics['bleu']:.1f} after {metrics['epochs']:.1f} "
          f"epochs, {metrics['seconds'] / 60:.1f} min on {metrics['ranks']} ranks "
          f"({metrics['sentences_per_sec']:.0f} sentences/s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
